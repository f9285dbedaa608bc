/*
** http_json.c — JSON answers of the HTTP listener (http_int.h).
**
** The answers are written by hand into a StrBuf rather than built as a
** jansson tree and dumped: a FLOAT cell "0.1" must reach the client as
** 0.1, not as jansson's re-rounded 0.10000000000000001, and a BIGINT id
** above 2^63 must not be squeezed through json_int_t. jansson is used where
** a parser is needed: to check that a JSON column's text is a JSON value
** before embedding it verbatim.
**
** Every writer produces valid UTF-8 JSON whatever the bytes it is given:
** strings are escaped and invalid UTF-8 replaced by U+FFFD; a numeric or
** vector cell whose text is not a JSON number is sent as a string, so a
** client always sees the value and the document always parses.
*/
#include <jansson.h>
#include <string.h>

#include "server/http/http_int.h"

/* ------------------------------------------------------------- strings */

/* Length of the valid UTF-8 sequence at z[0..n) (1..4), or 0 when the bytes
** there are not one (RFC 3629: no overlongs, no surrogates, <= U+10FFFF). */
static size_t utf8_seq(const unsigned char *z, size_t n) {
    unsigned char c = z[0];
    size_t len;
    unsigned lo = 0x80, hi = 0xBF; /* allowed range of the second byte */
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF)
        len = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        if (c == 0xE0) lo = 0xA0; /* overlong */
        if (c == 0xED) hi = 0x9F; /* UTF-16 surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        if (c == 0xF0) lo = 0x90; /* overlong */
        if (c == 0xF4) hi = 0x8F; /* above U+10FFFF */
    } else {
        return 0;
    }
    if (n < len || z[1] < lo || z[1] > hi) return 0;
    for (size_t i = 2; i < len; i++)
        if ((z[i] & 0xC0) != 0x80) return 0;
    return len;
}

void http_json_str(StrBuf *sb, const char *z, size_t n) {
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)z;
    size_t i = 0, iRun = 0; /* bytes p[iRun..i) are copied unchanged */
    strbuf_appendc(sb, '"');
    while (i < n) {
        unsigned char c = p[i];
        const char *zEsc = NULL;
        char aEsc[8];
        size_t nSeq = 1;
        if (c >= 0x80) {
            size_t nValid = utf8_seq(p + i, n - i);
            if (nValid) {
                i += nValid;
                continue;
            }
            zEsc = "\xEF\xBF\xBD"; /* U+FFFD for one bad byte */
        } else if (c == '"') {
            zEsc = "\\\"";
        } else if (c == '\\') {
            zEsc = "\\\\";
        } else if (c < 0x20) {
            switch (c) {
            case '\n':
                zEsc = "\\n";
                break;
            case '\r':
                zEsc = "\\r";
                break;
            case '\t':
                zEsc = "\\t";
                break;
            case '\b':
                zEsc = "\\b";
                break;
            case '\f':
                zEsc = "\\f";
                break;
            default:
                memcpy(aEsc, "\\u00", 4);
                aEsc[4] = hex[c >> 4];
                aEsc[5] = hex[c & 15];
                aEsc[6] = 0;
                zEsc = aEsc;
            }
        } else {
            i++;
            continue;
        }
        strbuf_append(sb, p + iRun, i - iRun);
        strbuf_appendz(sb, zEsc);
        i += nSeq;
        iRun = i;
    }
    strbuf_append(sb, p + iRun, i - iRun);
    strbuf_appendc(sb, '"');
}

static void json_strz(StrBuf *sb, const char *z) {
    http_json_str(sb, z, strlen(z));
}

/* ------------------------------------------------------------- numbers */

static int is_digit(char c) {
    return c >= '0' && c <= '9';
}

int http_json_is_number(const char *z, size_t n) {
    size_t i = 0;
    if (i < n && z[i] == '-') i++;
    if (i >= n) return 0;
    if (z[i] == '0') {
        i++;
    } else if (z[i] >= '1' && z[i] <= '9') {
        while (i < n && is_digit(z[i]))
            i++;
    } else {
        return 0;
    }
    if (i < n && z[i] == '.') {
        i++;
        if (i >= n || !is_digit(z[i])) return 0;
        while (i < n && is_digit(z[i]))
            i++;
    }
    if (i < n && (z[i] == 'e' || z[i] == 'E')) {
        i++;
        if (i < n && (z[i] == '+' || z[i] == '-')) i++;
        if (i >= n || !is_digit(z[i])) return 0;
        while (i < n && is_digit(z[i]))
            i++;
    }
    return i == n;
}

/* ---------------------------------------------------------------- cells */

const char *http_json_type_name(SqlColType t) {
    switch (t) {
    case SQLCOL_BOOL:
        return "bool";
    case SQLCOL_INT:
        return "long";
    case SQLCOL_BIGINT:
        return "long long";
    case SQLCOL_FLOAT:
        return "float";
    case SQLCOL_DOUBLE:
        return "double";
    case SQLCOL_TIMESTAMP:
        return "timestamp";
    case SQLCOL_STRING:
        return "string";
    case SQLCOL_JSON:
        return "json";
    case SQLCOL_VECTOR:
        return "float_vector";
    case SQLCOL_MULTI:
        return "multi";
    }
    return "string";
}

/* The element of a comma-separated list that starts at *pi: z[*pa..*pb),
** spaces trimmed. Moves *pi past its comma (beyond n after the last). */
static void list_elem(const char *z, size_t n, size_t *pi, size_t *pa, size_t *pb) {
    const char *pComma = memchr(z + *pi, ',', n - *pi);
    size_t iEnd = pComma ? (size_t)(pComma - z) : n;
    size_t a = *pi, b = iEnd;
    while (a < b && z[a] == ' ')
        a++;
    while (b > a && z[b - 1] == ' ')
        b--;
    *pa = a;
    *pb = b;
    *pi = iEnd + 1;
}

/* A vector cell "0.5,1,-2" as [0.5,1,-2]; "" (or only spaces) is [].
** Returns 0, having written nothing, when an element is not a number. */
static int vector_cell(StrBuf *sb, const char *z, size_t n) {
    size_t i, a, b;
    int bEmpty = 1;
    for (i = 0; i < n && bEmpty; i++)
        bEmpty = z[i] == ' ';
    /* First pass validates, so that a bad element leaves sb untouched. */
    for (i = 0; !bEmpty && i <= n;) {
        list_elem(z, n, &i, &a, &b);
        if (!http_json_is_number(z + a, b - a)) return 0;
    }
    strbuf_appendc(sb, '[');
    for (i = 0; !bEmpty && i <= n;) {
        if (i > 0) strbuf_appendc(sb, ',');
        list_elem(z, n, &i, &a, &b);
        strbuf_append(sb, z + a, b - a);
    }
    strbuf_appendc(sb, ']');
    return 1;
}

/* Whether z[0..n) is one JSON value that jansson accepts. */
static int is_json_value(const char *z, size_t n) {
    json_error_t jerr;
    json_t *j = json_loadb(z, n, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
    if (j == NULL) return 0;
    json_decref(j);
    return 1;
}

void http_json_cell(StrBuf *sb, SqlColType t, const SqlCell *c) {
    if (c->z == NULL) {
        strbuf_append(sb, "null", 4);
        return;
    }
    switch (t) {
    case SQLCOL_BOOL:
    case SQLCOL_INT:
    case SQLCOL_BIGINT:
    case SQLCOL_FLOAT:
    case SQLCOL_DOUBLE:
    case SQLCOL_TIMESTAMP:
        /* The cell's own digits: the SQL layer formatted them already. */
        if (http_json_is_number(c->z, c->n)) {
            strbuf_append(sb, c->z, c->n);
            return;
        }
        break;
    case SQLCOL_VECTOR:
    case SQLCOL_MULTI:
        if (vector_cell(sb, c->z, c->n)) return;
        break;
    case SQLCOL_JSON:
        /* Verbatim, so numbers inside keep their digits too. */
        if (is_json_value(c->z, c->n)) {
            strbuf_append(sb, c->z, c->n);
            return;
        }
        break;
    case SQLCOL_STRING:
        break;
    }
    http_json_str(sb, c->z, c->n);
}

/* -------------------------------------------------------------- answers */

void http_json_error(StrBuf *sb, const char *zMsg, size_t nMsg) {
    strbuf_appendz(sb, "{\"error\":");
    http_json_str(sb, zMsg, nMsg);
    strbuf_appendc(sb, '}');
}

void http_json_sql_error(StrBuf *sb, const char *zMsg, int iErrno, const char *zState) {
    strbuf_appendz(sb, "{\"error\":");
    json_strz(sb, zMsg);
    strbuf_appendf(sb, ",\"code\":%d,\"sqlstate\":", iErrno);
    json_strz(sb, zState);
    strbuf_appendc(sb, '}');
}

void http_json_health(StrBuf *sb, int64_t nUptime) {
    strbuf_appendf(sb, "{\"status\":\"ok\",\"version\":\"%s\",\"uptime\":%lld}", LOUPE_VERSION,
                   (long long)nUptime);
}

static void json_rows(StrBuf *sb, const SqlResult *r);

void http_json_result(StrBuf *sb, const SqlResult *r) {
    if (r->kind == SQLRES_ERROR) {
        /* zSqlState holds at most five characters; do not rely on its NUL. */
        char zState[6];
        size_t nState = strnlen(r->zSqlState, 5);
        memcpy(zState, r->zSqlState, nState);
        zState[nState] = 0;
        http_json_sql_error(sb, r->zErr, r->iErrno, zState);
        return;
    }
    if (r->kind == SQLRES_OK) {
        strbuf_appendf(sb,
                       "[{\"total\":%llu,\"error\":\"\",\"warning\":\"\",\"last_insert_id\":%llu}]",
                       (unsigned long long)r->nAffected, (unsigned long long)r->iLastInsertId);
        return;
    }
    /* one object per result set (a SELECT with FACETs has several) */
    strbuf_appendc(sb, '[');
    for (const SqlResult *q = r; q; q = q->pNext) {
        if (q != r) strbuf_appendc(sb, ',');
        json_rows(sb, q);
    }
    strbuf_appendc(sb, ']');
}

/* One result set as {"columns":[...],"data":[...],"total":N,...}. */
static void json_rows(StrBuf *sb, const SqlResult *r) {
    strbuf_appendz(sb, "{\"columns\":[");
    for (int c = 0; c < r->nCol; c++) {
        if (c) strbuf_appendc(sb, ',');
        strbuf_appendc(sb, '{');
        json_strz(sb, r->aCol[c].zName);
        strbuf_appendz(sb, ":{\"type\":\"");
        strbuf_appendz(sb, http_json_type_name(r->aCol[c].type));
        strbuf_appendz(sb, "\"}}");
    }
    strbuf_appendz(sb, "],\"data\":[");
    for (size_t iRow = 0; iRow < r->nRow && !sb->oom; iRow++) {
        const SqlCell *aRow = r->aCell + iRow * (size_t)r->nCol;
        if (iRow) strbuf_appendc(sb, ',');
        strbuf_appendc(sb, '{');
        for (int c = 0; c < r->nCol; c++) {
            if (c) strbuf_appendc(sb, ',');
            json_strz(sb, r->aCol[c].zName);
            strbuf_appendc(sb, ':');
            http_json_cell(sb, r->aCol[c].type, &aRow[c]);
        }
        strbuf_appendc(sb, '}');
    }
    strbuf_appendf(sb, "],\"total\":%zu,\"error\":\"\",\"warning\":\"\"}", r->nRow);
}

int http_status_for_result(const SqlResult *r) {
    if (r->kind != SQLRES_ERROR) return 200;
    switch (r->iErrno) {
    case 1037: /* ER_OUTOFMEMORY */
    case 1038: /* ER_OUT_OF_SORTMEMORY */
    case 1041: /* ER_OUT_OF_RESOURCES */
    case 1105: /* ER_UNKNOWN_ERROR: what sql_errno_for_code gives LP_NOMEM,
               ** LP_INTERNAL, LP_IOERR, LP_CORRUPT */
    case 1815: /* ER_INTERNAL_ERROR */
        return 500;
    }
    return r->iErrno >= 2000 ? 500 : 400;
}
