/* value.c — see value.h. */
#include "table/value.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "table/schema.h"
#include "text/utf8.h"

const char *coltype_name(ColType t) {
    static const char *const az[COL_NTYPES] = {
        "bigint", "text", "string", "int", "bigint", "float",
        "bool", "timestamp", "json", "float_vector", "multi", "multi64",
    };
    return (t >= 0 && t < COL_NTYPES) ? az[t] : "?";
}

int value_fmt_float(float f, char *buf) {
    int n = 0;
    for (int p = 6; p <= 9; p++) {
        n = snprintf(buf, 32, "%.*g", p, (double)f);
        if (strtof(buf, NULL) == f) break;
    }
    return n;
}

int value_fmt_double(double d, char *buf) {
    int n = 0;
    for (int p = 15; p <= 17; p++) {
        n = snprintf(buf, 32, "%.*g", p, d);
        if (strtod(buf, NULL) == d) break;
    }
    return n;
}

void value_format(const Value *v, int bFloat32, StrBuf *sb) {
    char buf[32];
    int n;
    switch (v->kind) {
    case VAL_NULL:
        break;
    case VAL_INT:
        n = snprintf(buf, sizeof(buf), "%" PRId64, v->u.i);
        strbuf_append(sb, buf, (size_t)n);
        break;
    case VAL_FLOAT:
        n = bFloat32 ? value_fmt_float((float)v->u.f, buf) : value_fmt_double(v->u.f, buf);
        strbuf_append(sb, buf, (size_t)n);
        break;
    case VAL_STR:
        strbuf_append(sb, v->u.s.z, v->u.s.n);
        break;
    case VAL_VEC:
        for (uint32_t i = 0; i < v->u.v.n; i++) {
            if (i) strbuf_appendc(sb, ',');
            n = value_fmt_float(v->u.v.a[i], buf);
            strbuf_append(sb, buf, (size_t)n);
        }
        break;
    case VAL_MVA:
        for (uint32_t i = 0; i < v->u.m.n; i++) {
            if (i) strbuf_appendc(sb, ',');
            n = snprintf(buf, sizeof(buf), "%" PRId64, v->u.m.a[i]);
            strbuf_append(sb, buf, (size_t)n);
        }
        break;
    }
}

int value_strcmp_ci(const char *a, size_t na, const char *b, size_t nb) {
    size_t n = na < nb ? na : nb;
    for (size_t i = 0; i < n; i++) {
        int ca = (unsigned char)a[i], cb = (unsigned char)b[i];
        if (ca >= 'A' && ca <= 'Z') ca += 32;
        if (cb >= 'A' && cb <= 'Z') cb += 32;
        if (ca != cb) return ca - cb;
    }
    return na < nb ? -1 : na > nb ? 1 : 0;
}

/* ------------------------------------------------------------------ */
/* Coercion                                                            */

/* A printable excerpt of a string value for error messages. */
static void excerpt(const char *z, size_t n, char *out, size_t nOut) {
    size_t k = n < 40 ? n : utf8_floor(z, 40);
    snprintf(out, nOut, "'%.*s'%s", (int)k, z, k < n ? "..." : "");
}

/* "INT", "FLOAT"...: the type as messages name it. */
static const char *type_upper(ColType t, char *buf) {
    const char *z = coltype_name(t);
    int i = 0;
    for (; i < 15 && z[i]; i++) buf[i] = (char)(z[i] >= 'a' && z[i] <= 'z' ? z[i] - 32 : z[i]);
    buf[i] = 0;
    return buf;
}

static int err_type(LpError *err, const ColumnSchema *c, const char *zWant, Value v) {
    char zGot[80];
    switch (v.kind) {
    case VAL_STR: excerpt(v.u.s.z, v.u.s.n, zGot, sizeof(zGot)); break;
    case VAL_INT: snprintf(zGot, sizeof(zGot), "%" PRId64, v.u.i); break;
    case VAL_FLOAT: snprintf(zGot, sizeof(zGot), "%.17g", v.u.f); break;
    case VAL_VEC: snprintf(zGot, sizeof(zGot), "a vector of %u values", v.u.v.n); break;
    case VAL_MVA: snprintf(zGot, sizeof(zGot), "a list of %u integers", v.u.m.n); break;
    default: snprintf(zGot, sizeof(zGot), "NULL"); break;
    }
    char zType[16];
    return lp_err_set(err, LP_BADINPUT, "invalid value %s for %s column '%s': expected %s", zGot,
                      type_upper(c->type, zType), c->zName, zWant);
}

/* Parses a whole string as a decimal integer. 0 ok, 1 not an integer,
** 2 out of int64 range. */
static int parse_int(const char *z, size_t n, int64_t *pOut) {
    char buf[32];
    while (n && isspace((unsigned char)*z)) z++, n--;
    while (n && isspace((unsigned char)z[n - 1])) n--;
    if (n == 0 || n >= sizeof(buf)) return n == 0 ? 1 : 2;
    memcpy(buf, z, n);
    buf[n] = 0;
    size_t i = (buf[0] == '-' || buf[0] == '+') ? 1 : 0;
    if (i == n) return 1;
    for (; i < n; i++) {
        if (!isdigit((unsigned char)buf[i])) return 1;
    }
    errno = 0;
    long long v = strtoll(buf, NULL, 10);
    if (errno == ERANGE) return 2;
    *pOut = v;
    return 0;
}

/* Parses a whole string as a number. 0 ok, 1 not a number. */
static int parse_double(const char *z, size_t n, double *pOut) {
    char buf[64];
    while (n && isspace((unsigned char)*z)) z++, n--;
    while (n && isspace((unsigned char)z[n - 1])) n--;
    if (n == 0 || n >= sizeof(buf)) return 1;
    memcpy(buf, z, n);
    buf[n] = 0;
    /* strtod would also take "inf", "nan" and hex; only decimal is a number here. */
    for (size_t i = 0; i < n; i++) {
        if (!strchr("0123456789+-.eE", buf[i])) return 1;
    }
    char *end;
    double d = strtod(buf, &end);
    if (*end) return 1;
    *pOut = d;
    return 0;
}

/* An integer value for an integer-typed column, from int, integral float,
** or integer string. */
static int to_int(const ColumnSchema *c, Value v, int64_t *pOut, LpError *err) {
    switch (v.kind) {
    case VAL_INT:
        *pOut = v.u.i;
        return LP_OK;
    case VAL_FLOAT:
        if (v.u.f != floor(v.u.f) || !isfinite(v.u.f)) return err_type(err, c, "an integer", v);
        /* <= : a literal just below INT64_MIN rounds to -2^63 as a double, and
        ** must not slip in as INT64_MIN (that one arrives as an integer). */
        if (v.u.f <= -9223372036854775808.0 || v.u.f >= 9223372036854775808.0) {
            char zType[16];
            return lp_err_set(err, LP_RANGE,
                              fabs(v.u.f) < 1e30 ? "value %.0f out of range for %s column '%s'"
                                                 : "value %.17g out of range for %s column '%s'",
                              v.u.f, type_upper(c->type, zType), c->zName);
        }
        *pOut = (int64_t)v.u.f;
        return LP_OK;
    case VAL_STR: {
        int rc = parse_int(v.u.s.z, v.u.s.n, pOut);
        if (rc == 1) return err_type(err, c, "an integer", v);
        if (rc == 2) {
            char zGot[80], zType[16];
            excerpt(v.u.s.z, v.u.s.n, zGot, sizeof(zGot));
            return lp_err_set(err, LP_RANGE, "value %s out of range for %s column '%s'", zGot,
                              type_upper(c->type, zType), c->zName);
        }
        return LP_OK;
    }
    default:
        return err_type(err, c, "an integer", v);
    }
}

int64_t value_days_from_civil(int64_t y, unsigned m, unsigned d) {
    y -= m <= 2;
    const int64_t era = (y >= 0 ? y : y - 399) / 400;
    const unsigned yoe = (unsigned)(y - era * 400);
    const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

/* 'YYYY-MM-DD' or 'YYYY-MM-DD HH:MM:SS' (or with 'T') as UTC seconds.
** 0 ok, 1 malformed. */
static int parse_datetime(const char *z, size_t n, int64_t *pOut) {
    unsigned Y, M, D, h = 0, mi = 0, s = 0;
    char buf[32];
    if (n >= sizeof(buf)) return 1;
    memcpy(buf, z, n);
    buf[n] = 0;
    int used = 0;
    if (sscanf(buf, "%4u-%2u-%2u%n", &Y, &M, &D, &used) != 3 || used != 10) return 1;
    if (buf[used]) {
        int used2 = 0;
        if ((buf[used] != ' ' && buf[used] != 'T') ||
            sscanf(buf + used + 1, "%2u:%2u:%2u%n", &h, &mi, &s, &used2) != 3 ||
            used2 != 8 || buf[used + 1 + used2]) {
            return 1;
        }
    }
    static const unsigned mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (M < 1 || M > 12 || D < 1 || D > mdays[M - 1] || h > 23 || mi > 59 || s > 59) return 1;
    int leap = (Y % 4 == 0 && Y % 100 != 0) || Y % 400 == 0;
    if (M == 2 && D == 29 && !leap) return 1;
    *pOut = value_days_from_civil(Y, M, D) * 86400 + h * 3600 + mi * 60 + s;
    return 0;
}

/* value.h. */
const char *value_date_math(const char *z, int64_t now, int64_t *pOut, int *pAt) {
    const char *p = z;
    int64_t t;
    if (!strncmp(p, "now", 3)) {
        t = now;
        p += 3;
    } else {
        /* YYYY[-MM[-DD[( |T)HH:MM[:SS]]]]||, every field its digits exactly */
        const char *bar = strstr(p, "||");
        unsigned a[6] = {0, 1, 1, 0, 0, 0}; /* Y M D h m s */
        static const char aSep[] = {0, '-', '-', ' ', ':', ':'};
        int k = 0, n = bar ? (int)(bar - p) : 0, i = 0;
        while (k < 6 && i < n) {
            if (k > 0 && !(p[i] == aSep[k] || (k == 3 && p[i] == 'T'))) break;
            i += k > 0;
            int w = k == 0 ? 4 : 2;
            unsigned v = 0;
            for (int d = 0; d < w; d++, i++) {
                if (i >= n || p[i] < '0' || p[i] > '9') {
                    *pAt = 0;
                    return "expected a date as YYYY, YYYY-MM, YYYY-MM-DD or YYYY-MM-DD HH:MM[:SS] before ||";
                }
                v = v * 10 + (unsigned)(p[i] - '0');
            }
            a[k++] = v;
        }
        static const unsigned mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
        unsigned Y = a[0], M = a[1], D = a[2], h = a[3], mi = a[4], sec = a[5];
        if (!bar || k == 0 || i != n || k == 4 || M < 1 || M > 12 || D < 1 || D > mdays[M - 1] ||
            (M == 2 && D == 29 && !((Y % 4 == 0 && Y % 100 != 0) || Y % 400 == 0)) || h > 23 || mi > 59 || sec > 59) {
            *pAt = 0;
            return bar ? "expected a date as YYYY, YYYY-MM, YYYY-MM-DD or YYYY-MM-DD HH:MM[:SS] before ||"
                       : "expected now or a date followed by || ('2017-03-05||')";
        }
        t = value_days_from_civil(Y, M, D) * 86400 + h * 3600 + mi * 60 + sec;
        p = bar + 2;
    }
    while (*p) {
        char op = *p;
        int64_t num = 1;
        const char *at = p;
        if (op != '+' && op != '-' && op != '/') {
            *pAt = (int)(p - z);
            return "expected +N, -N or / and a unit";
        }
        p++;
        if (op != '/') {
            char *end;
            long long v = strtoll(p, &end, 10);
            if (end == p || *p < '0' || *p > '9' || v > 1000000) {
                *pAt = (int)(p - z);
                return "expected a whole number (up to 1000000) after + or -";
            }
            num = op == '-' ? -v : v;
            p = end;
        }
        char u = *p ? *p++ : 0;
        int64_t step = u == 's' ? 1 : u == 'm' ? 60 : u == 'h' || u == 'H' ? 3600 : u == 'd' ? 86400 : u == 'w' ? 7 * 86400 : 0;
        if (!step && u != 'M' && u != 'y') {
            *pAt = (int)(p - z - (u != 0));
            return "expected a unit: s, m, h, d, w, M or y";
        }
        if (op == '/' && step) {
            int64_t base = u == 'w' ? 4 * 86400 : 0, d = t - base; /* weeks from Monday 1970-01-05 */
            t = base + (d / step - (d % step < 0)) * step;
        } else if (step) {
            t += num * step;
        } else {
            time_t tt = (time_t)t;
            struct tm tm;
            if (!gmtime_r(&tt, &tm)) {
                *pAt = (int)(at - z);
                return "the date is out of range";
            }
            if (op == '/') { /* the month's or the year's first day */
                t = value_days_from_civil(tm.tm_year + 1900, u == 'M' ? (unsigned)tm.tm_mon + 1 : 1, 1) * 86400;
                continue;
            }
            int64_t m = (int64_t)tm.tm_year * 12 + tm.tm_mon + (u == 'y' ? 12 * num : num);
            int64_t y = m >= 0 ? m / 12 + 1900 : -((-m + 11) / 12) + 1900;
            unsigned mo = (unsigned)(m - (y - 1900) * 12) + 1;
            unsigned last = (unsigned)(value_days_from_civil(mo == 12 ? y + 1 : y, mo == 12 ? 1 : mo + 1, 1) -
                                       value_days_from_civil(y, mo, 1));
            unsigned day = (unsigned)tm.tm_mday < last ? (unsigned)tm.tm_mday : last;
            t = value_days_from_civil(y, mo, day) * 86400 + tm.tm_hour * 3600 + tm.tm_min * 60 + tm.tm_sec;
        }
        if (t < -(int64_t)1e13 || t > (int64_t)1e13) {
            *pAt = (int)(at - z);
            return "the date is out of range";
        }
    }
    *pOut = t;
    return NULL;
}


static int check_utf8(const ColumnSchema *c, const char *z, size_t n, LpError *err) {
    int64_t bad = utf8_check(z, n);
    if (bad >= 0) {
        return lp_err_setpos(err, LP_BADINPUT, bad,
                             "invalid UTF-8 at byte %" PRId64 " of the value for column '%s'", bad,
                             c->zName);
    }
    return LP_OK;
}

/* Parses "0.1, 0.2" / "[0.1,0.2]" / "(0.1,0.2)" into a vector in a. */
static int parse_vector_str(const ColumnSchema *c, Value v, Arena *a, Value *pOut,
                            LpError *err) {
    const char *z = v.u.s.z, *end = z + v.u.s.n;
    while (z < end && isspace((unsigned char)*z)) z++;
    while (end > z && isspace((unsigned char)end[-1])) end--;
    if (z < end && (*z == '[' || *z == '(')) {
        char close = *z == '[' ? ']' : ')';
        if (end[-1] != close) return err_type(err, c, "a vector like (0.1, 0.2, ...)", v);
        z++, end--;
    }
    size_t cap = 1;
    for (const char *p = z; p < end; p++) cap += *p == ',';
    float *af = arena_alloc(a, cap * sizeof(float));
    if (!af) return LP_NOMEM;
    uint32_t n = 0;
    const char *p = z;
    while (p < end) {
        const char *q = memchr(p, ',', (size_t)(end - p));
        if (!q) q = end;
        double d;
        if (parse_double(p, (size_t)(q - p), &d)) {
            return err_type(err, c, "a vector of numbers like (0.1, 0.2, ...)", v);
        }
        af[n++] = (float)d;
        p = q + 1;
        if (q == end) break;
        if (p == end) return err_type(err, c, "a vector of numbers like (0.1, 0.2, ...)", v);
    }
    pOut->kind = VAL_VEC;
    pOut->u.v.a = af;
    pOut->u.v.n = n;
    return LP_OK;
}

static int cmp_i64(const void *x, const void *y) {
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return (a > b) - (a < b);
}

/* A multi-value from a list of integers, one integer, or a string of
** integers separated by commas (optionally in parentheses or brackets):
** range-checked, sorted, repeats dropped, in a. */
static int coerce_mva(const ColumnSchema *c, Value v, Arena *a, Value *pOut, LpError *err) {
    static const char zWant[] = "a list of integers like (1, 2, 3)";
    uint32_t n = 0;
    int64_t *ai;
    if (v.kind == VAL_MVA || v.kind == VAL_INT) {
        n = v.kind == VAL_MVA ? v.u.m.n : 1;
        ai = arena_alloc(a, sizeof(int64_t) * (n ? n : 1));
        if (!ai) return LP_NOMEM;
        if (v.kind == VAL_MVA && n) memcpy(ai, v.u.m.a, sizeof(int64_t) * n);
        if (v.kind == VAL_INT) ai[0] = v.u.i;
    } else if (v.kind == VAL_STR) {
        const char *z = v.u.s.z, *end = z + v.u.s.n;
        while (z < end && isspace((unsigned char)*z)) z++;
        while (end > z && isspace((unsigned char)end[-1])) end--;
        if (z < end && (*z == '[' || *z == '(')) {
            if (end[-1] != (*z == '[' ? ']' : ')')) return err_type(err, c, zWant, v);
            z++, end--;
            while (z < end && isspace((unsigned char)*z)) z++;
        }
        size_t cap = 1;
        for (const char *p = z; p < end; p++) cap += *p == ',';
        ai = arena_alloc(a, cap * sizeof(int64_t));
        if (!ai) return LP_NOMEM;
        for (const char *p = z; p < end;) {
            const char *q = memchr(p, ',', (size_t)(end - p));
            if (!q) q = end;
            int rc = parse_int(p, (size_t)(q - p), &ai[n]);
            if (rc == 1) return err_type(err, c, zWant, v);
            if (rc == 2) {
                char zGot[80];
                excerpt(p, (size_t)(q - p), zGot, sizeof(zGot));
                return lp_err_set(err, LP_RANGE, "value %s out of range for %s column '%s'", zGot,
                                  c->type == COL_MULTI ? "MULTI" : "MULTI64", c->zName);
            }
            n++;
            if (q == end) break;
            p = q + 1;
            if (p == end) return err_type(err, c, zWant, v); /* a trailing comma */
        }
    } else {
        return err_type(err, c, zWant, v);
    }
    if (c->type == COL_MULTI) {
        for (uint32_t k = 0; k < n; k++) {
            if (ai[k] < 0 || ai[k] > (int64_t)UINT32_MAX) {
                return lp_err_set(err, LP_RANGE,
                                  "value %" PRId64 " out of range for MULTI column '%s' (0 to %" PRIu32 ")",
                                  ai[k], c->zName, UINT32_MAX);
            }
        }
    }
    qsort(ai, n, sizeof(int64_t), cmp_i64);
    uint32_t m = 0;
    for (uint32_t k = 0; k < n; k++) {
        if (m == 0 || ai[k] != ai[m - 1]) ai[m++] = ai[k];
    }
    pOut->kind = VAL_MVA;
    pOut->u.m.a = ai;
    pOut->u.m.n = m;
    return LP_OK;
}

int value_coerce(const ColumnSchema *c, Value v, Arena *a, Value *pOut, LpError *err) {
    int rc;
    int64_t i;
    if (v.kind == VAL_NULL) {
        *pOut = v;
        return LP_OK;
    }
    switch (c->type) {
    case COL_ID:
    case COL_INT:
    case COL_BIGINT:
    case COL_TIMESTAMP:
    case COL_BOOL: {
        if (c->type == COL_TIMESTAMP && v.kind == VAL_STR && parse_int(v.u.s.z, v.u.s.n, &i) == 1) {
            if (parse_datetime(v.u.s.z, v.u.s.n, &i)) {
                return err_type(err, c, "unix seconds or 'YYYY-MM-DD[ HH:MM:SS]'", v);
            }
        } else if (c->type == COL_BOOL && v.kind == VAL_STR &&
                   (v.u.s.n == 4 || v.u.s.n == 5) &&
                   (value_strcmp_ci(v.u.s.z, v.u.s.n, "true", 4) == 0 ||
                    value_strcmp_ci(v.u.s.z, v.u.s.n, "false", 5) == 0)) {
            i = v.u.s.n == 4;
        } else if ((rc = to_int(c, v, &i, err)) != LP_OK) {
            return rc;
        }
        int64_t lo = INT64_MIN, hi = INT64_MAX;
        if (c->type == COL_INT) lo = INT32_MIN, hi = INT32_MAX;
        if (c->type == COL_BOOL) lo = 0, hi = 1;
        if (c->type == COL_TIMESTAMP || c->type == COL_ID) lo = c->type == COL_ID ? 1 : 0;
        if (i < lo || i > hi) {
            char zType[16];
            return lp_err_set(err, LP_RANGE,
                              "value %" PRId64 " out of range for %s column '%s' (%" PRId64
                              " to %" PRId64 ")",
                              i, type_upper(c->type, zType), c->zName, lo, hi);
        }
        *pOut = value_int(i);
        return LP_OK;
    }
    case COL_FLOAT: {
        double d;
        if (v.kind == VAL_INT) {
            d = (double)v.u.i;
        } else if (v.kind == VAL_FLOAT) {
            d = v.u.f;
        } else if (v.kind == VAL_STR && parse_double(v.u.s.z, v.u.s.n, &d) == 0) {
            /* numeric string */
        } else {
            return err_type(err, c, "a number", v);
        }
        float f = (float)d;
        if (!isfinite(d) || !isfinite(f)) {
            return lp_err_set(err, LP_RANGE, "value %.17g out of range for FLOAT column '%s'", d,
                              c->zName);
        }
        *pOut = value_float((double)f);
        return LP_OK;
    }
    case COL_STRING:
    case COL_TEXT: {
        char buf[32];
        int n;
        switch (v.kind) {
        case VAL_STR:
            if ((rc = check_utf8(c, v.u.s.z, v.u.s.n, err)) != LP_OK) return rc;
            *pOut = v;
            return LP_OK;
        case VAL_INT:
            n = snprintf(buf, sizeof(buf), "%" PRId64, v.u.i);
            break;
        case VAL_FLOAT:
            n = value_fmt_double(v.u.f, buf);
            break;
        default:
            return err_type(err, c, "a string", v);
        }
        char *z = arena_strndup(a, buf, (size_t)n);
        if (!z) return LP_NOMEM;
        *pOut = value_str(z, (uint32_t)n);
        return LP_OK;
    }
    case COL_JSON: {
        if (v.kind != VAL_STR) return err_type(err, c, "a JSON document in a string", v);
        if ((rc = check_utf8(c, v.u.s.z, v.u.s.n, err)) != LP_OK) return rc;
        json_error_t jerr;
        json_t *j = json_loadb(v.u.s.z, v.u.s.n, JSON_DECODE_ANY, &jerr);
        if (!j) {
            return lp_err_setpos(err, LP_BADINPUT, jerr.position,
                                 "invalid JSON for column '%s': %s", c->zName, jerr.text);
        }
        char *zj = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY);
        json_decref(j);
        if (!zj) return LP_NOMEM;
        size_t n = strlen(zj);
        char *z = arena_strndup(a, zj, n);
        free(zj);
        if (!z) return LP_NOMEM;
        *pOut = value_str(z, (uint32_t)n);
        return LP_OK;
    }
    case COL_VECTOR: {
        Value vv = v;
        if (v.kind == VAL_STR) {
            if ((rc = parse_vector_str(c, v, a, &vv, err)) != LP_OK) return rc;
        } else if (v.kind == VAL_MVA) { /* a list of integers */
            float *af = arena_alloc(a, sizeof(float) * (v.u.m.n ? v.u.m.n : 1));
            if (!af) return LP_NOMEM;
            for (uint32_t k = 0; k < v.u.m.n; k++) af[k] = (float)v.u.m.a[k];
            vv.kind = VAL_VEC;
            vv.u.v.a = af;
            vv.u.v.n = v.u.m.n;
        } else if (v.kind != VAL_VEC) {
            return err_type(err, c, "a vector like (0.1, 0.2, ...)", v);
        }
        if (c->vec.nDims && (int)vv.u.v.n != c->vec.nDims) {
            return lp_err_set(err, LP_BADINPUT,
                              "vector for column '%s' has %u values, the column has %d dimensions",
                              c->zName, vv.u.v.n, c->vec.nDims);
        }
        if (vv.u.v.n == 0) {
            return lp_err_set(err, LP_BADINPUT, "empty vector for column '%s'", c->zName);
        }
        for (uint32_t k = 0; k < vv.u.v.n; k++) {
            if (!isfinite(vv.u.v.a[k])) {
                return lp_err_set(err, LP_RANGE,
                                  "component %u of the vector for column '%s' is not a finite "
                                  "float32",
                                  k + 1, c->zName);
            }
        }
        *pOut = vv;
        return LP_OK;
    }
    case COL_MULTI:
    case COL_MULTI64:
        return coerce_mva(c, v, a, pOut, err);
    default:
        return lp_err_set(err, LP_INTERNAL, "column '%s' has an unknown type", c->zName);
    }
}
