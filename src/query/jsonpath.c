/*
** jsonpath.c — see jsonpath.h.
**
** The walk reads the text as it goes: at an object it reads each key and
** skips the values of the others (strings by their quotes, objects and
** arrays by counting brackets outside strings), at an array it skips the
** elements before the index. Only the value at the end of the path is
** converted.
*/
#include "query/jsonpath.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "text/utf8.h"

static size_t skip_ws(const char *z, size_t n, size_t i) {
    while (i < n && (z[i] == ' ' || z[i] == '\t' || z[i] == '\n' || z[i] == '\r')) i++;
    return i;
}

/* Just past the string whose opening quote is z[i], or 0 when it does not
** end; *pbEsc set when it holds an escape. */
static size_t string_end(const char *z, size_t n, size_t i, int *pbEsc) {
    for (size_t j = i + 1; j < n; j++) {
        if (z[j] == '\\') {
            *pbEsc = 1;
            j++;
        } else if (z[j] == '"') {
            return j + 1;
        }
    }
    return 0;
}

/* Just past the value that starts at z[i], or 0 when there is none. */
static size_t value_end(const char *z, size_t n, size_t i) {
    if (i >= n) return 0;
    int bEsc = 0;
    if (z[i] == '"') return string_end(z, n, i, &bEsc);
    if (z[i] == '{' || z[i] == '[') {
        int depth = 0;
        for (size_t j = i; j < n; j++) {
            char c = z[j];
            if (c == '"') {
                size_t k = string_end(z, n, j, &bEsc);
                if (!k) return 0;
                j = k - 1;
            } else if (c == '{' || c == '[') {
                depth++;
            } else if ((c == '}' || c == ']') && --depth == 0) {
                return j + 1;
            }
        }
        return 0;
    }
    size_t j = i; /* a number or a literal */
    while (j < n && z[j] != ',' && z[j] != '}' && z[j] != ']' && z[j] != ' ' && z[j] != '\t' && z[j] != '\n' &&
           z[j] != '\r') {
        j++;
    }
    return j > i ? j : 0;
}

static int hex4(const char *z, uint32_t *pv) {
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        char c = z[i];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= (uint32_t)(c - '0');
        else if (c >= 'a' && c <= 'f') v |= (uint32_t)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= (uint32_t)(c - 'A' + 10);
        else return 0;
    }
    *pv = v;
    return 1;
}

/* The escaped string body z[0..n) (no quotes) unescaped into out (room
** for n bytes: no escape grows); its length. A broken escape is copied. */
static size_t unescape(const char *z, size_t n, char *out) {
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (z[i] != '\\' || i + 1 >= n) {
            out[o++] = z[i];
            continue;
        }
        char c = z[++i];
        uint32_t cp, lo;
        switch (c) {
        case 'b': out[o++] = '\b'; break;
        case 'f': out[o++] = '\f'; break;
        case 'n': out[o++] = '\n'; break;
        case 'r': out[o++] = '\r'; break;
        case 't': out[o++] = '\t'; break;
        case 'u':
            if (i + 4 < n && hex4(z + i + 1, &cp)) {
                i += 4;
                if (cp >= 0xD800 && cp < 0xDC00 && i + 6 < n && z[i + 1] == '\\' && z[i + 2] == 'u' &&
                    hex4(z + i + 3, &lo) && lo >= 0xDC00 && lo < 0xE000) {
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    i += 6;
                } else if (cp >= 0xD800 && cp < 0xE000) {
                    cp = 0xFFFD; /* a lone surrogate */
                }
                o += utf8_encode(cp, out + o);
            } else {
                out[o++] = '\\';
                out[o++] = 'u';
            }
            break;
        default: out[o++] = c; break; /* \" \\ \/ */
        }
    }
    return o;
}

/* Is the key whose text (between its quotes) is z[0..n) the step's key? */
static int key_is(const char *z, size_t n, int bEsc, const JsonStep *st) {
    if (!bEsc) return n == st->nKey && memcmp(z, st->zKey, n) == 0;
    char buf[512];
    if (n > sizeof(buf)) return 0;
    size_t m = unescape(z, n, buf);
    return m == st->nKey && memcmp(buf, st->zKey, m) == 0;
}

/* Where the value the step names starts, in the object or array at z[i];
** 0 when there is none. */
static size_t step_into(const char *z, size_t n, size_t i, const JsonStep *st) {
    if (i >= n || z[i] != (st->zKey ? '{' : '[')) return 0;
    i = skip_ws(z, n, i + 1);
    if (i < n && z[i] == (st->zKey ? '}' : ']')) return 0;
    for (int64_t k = 0; i < n; k++) {
        if (st->zKey) {
            int bEsc = 0;
            size_t e = z[i] == '"' ? string_end(z, n, i, &bEsc) : 0;
            if (!e) return 0;
            int bHit = key_is(z + i + 1, e - i - 2, bEsc, st);
            i = skip_ws(z, n, e);
            if (i >= n || z[i] != ':') return 0;
            i = skip_ws(z, n, i + 1);
            if (bHit) return i;
        } else if (k == st->iIndex) {
            return i;
        }
        if (!(i = value_end(z, n, i))) return 0;
        i = skip_ws(z, n, i);
        if (i >= n || z[i] != ',') return 0;
        i = skip_ws(z, n, i + 1);
    }
    return 0;
}

/* The number z[0..n) as a Value: an integer when it is one that fits. */
static Value number(const char *z, size_t n) {
    char buf[400];
    if (n == 0 || n >= sizeof(buf)) return value_null();
    memcpy(buf, z, n);
    buf[n] = 0;
    char *end;
    if (!memchr(buf, '.', n) && !memchr(buf, 'e', n) && !memchr(buf, 'E', n)) {
        errno = 0;
        long long v = strtoll(buf, &end, 10);
        if (errno == 0 && *end == 0) return value_int(v);
    }
    double d = strtod(buf, &end);
    return *end == 0 ? value_float(d) : value_null();
}

Value json_path_value(const char *z, size_t n, const JsonStep *aStep, int nStep, Arena *a) {
    size_t i = skip_ws(z, n, 0);
    for (int s = 0; s < nStep; s++) {
        if (!(i = step_into(z, n, i, &aStep[s]))) return value_null();
    }
    size_t e = value_end(z, n, i);
    if (!e) return value_null();
    switch (z[i]) {
    case '"': {
        int bEsc = 0;
        (void)string_end(z, n, i, &bEsc);
        size_t len = e - i - 2;
        if (!bEsc) return value_str(z + i + 1, (uint32_t)len);
        char *out = a ? arena_alloc(a, len + 1) : NULL;
        if (!out) return value_null();
        size_t m = unescape(z + i + 1, len, out);
        out[m] = 0;
        return value_str(out, (uint32_t)m);
    }
    case '{':
    case '[': return value_str(z + i, (uint32_t)(e - i));
    case 't': return e - i == 4 && !memcmp(z + i, "true", 4) ? value_int(1) : value_null();
    case 'f': return e - i == 5 && !memcmp(z + i, "false", 5) ? value_int(0) : value_null();
    case 'n': return value_null();
    default: return number(z + i, e - i);
    }
}

int json_iter_init(JsonIter *it, const char *z, size_t n) {
    size_t i = skip_ws(z, n, 0);
    it->z = z;
    it->n = n;
    it->i = 0;
    if (i >= n || z[i] != '[') return 0;
    it->i = skip_ws(z, n, i + 1);
    if (it->i < n && z[it->i] == ']') it->i = n; /* empty */
    return 1;
}

int json_iter_next(JsonIter *it, Arena *a, Value *pv) {
    const char *z = it->z;
    size_t n = it->n, i = it->i, e;
    if (i >= n || !(e = value_end(z, n, i))) {
        it->i = n;
        return 0;
    }
    *pv = json_path_value(z + i, e - i, NULL, 0, a);
    i = skip_ws(z, n, e);
    /* ',' and the next element, or the end of the array */
    it->i = i < n && z[i] == ',' ? skip_ws(z, n, i + 1) : n;
    return 1;
}
