/*
** http_search.c — POST /search: Manticore's JSON search request, answered
** by the SQL engine.
**
** A request is translated into one SELECT (http_search_sql) that the same
** session code as /sql runs; its rows, and SHOW META's total, are then
** written in Manticore's hits shape (http_search_answer). Nothing is
** searched here: the translation only quotes, so every rule of MATCH and
** WHERE (and every error message of theirs) is the SQL layer's.
**
** The request (each key optional but "table"):
**   table | index      the table
**   query              one query object (below); none: every row
**   limit | size       rows to return (20); offset | from: rows to skip (0)
**   sort               "_score", "attr", {"attr": "asc"|"desc"} or
**                      {"attr": {"order": ..., "mode": "min"|"max"}} (mode: a
**                      multi-value by its least or greatest item), or
**                      {"_geo_distance": {location_anchor, location_source,
**                      distance_type, order}} (GEODIST()), or a list of them
**   _source            true | false | "attr" | ["a", "b"] |
**                      {"includes": [...], "excludes": [...]}
**   highlight          {"fields": ["title"] | {"title": {}}, options...}
**   options            {"ranker": "bm25", "field_weights": {"title": 2}, ...}
**   knn                {"field": "v", "query_vector": [..] | "query": [..] or
**                      "text" | "doc_id": id, "k": 10, "ef": 200, "name":
**                      "dense"}: knn() (k: the rows asked for); beside a
**                      full-text query (named "query"), a hybrid search
**                      (options.fusion_method "rrf"; options.fusion_weights
**                      by those names)
**   hybrid             {"query": "text", "field": "v", "k": 10}: hybrid_match()
**   aggs               {"name": {"terms": {"field": "brand", "size": 10},
**                      "sort": [{"count(*)": "desc"}]}}: one FACET of the
**                      SELECT each (the same rows grouped by the field,
**                      COUNT(*)); the answer's "aggregations" has their buckets;
**                      also {"histogram": {"field", "interval", "offset"}},
**                      {"range": {"field", "ranges": [{"from", "to"}]}},
**                      {"date_histogram": {"field", "calendar_interval" |
**                      "fixed_interval"}}, {"date_range": {"field", "ranges":
**                      [{"from": "now-1M/M", "to": "now"}]}}, each with
**                      "keyed" (tr_bucket_agg)
**   track_scores, profile: accepted, change nothing (scores are always sent)
** Query objects:
**   match_all          {}
**   match              {"field": "text"} or {"field": {"query": "text",
**                      "operator": "or"|"and", "boost": 2}}; the field may be
**                      "*" or "_all", "f1,f2", "!f"; the text is words only:
**                      operator characters are read as spaces
**   match_phrase       {"field": "text"}: the words as one phrase
**   query_string       "MATCH syntax" or {"query": "..."}: as written
**   equals | in | range  {"attr": value} | {"attr": [values]} |
**                      {"attr": {"gt"|"gte"|"lt"|"lte": value, ...}}; attr
**                      may be "any(tags)" or "all(tags)" of a multi-value
**   geo_distance       {"location_anchor": {"lat": 49, "lon": 15} | "49, 15" |
**                      [15, 49], "location_source": {"lat": "la", "lon":
**                      "lo"} | "la, lo" | ["lo", "la"], "distance": "100 km"
**                      (a number: metres), "distance_type": "adaptive" |
**                      "haversine"}: GEODIST(la, lo, 49, 15, {in=degrees,
**                      out=m}) <= the distance; degrees throughout
**   bool               {"must": [...], "should": [...], "must_not": [...],
**                      "filter": [...]}, each a query or a list of them;
**                      should counts only without must, filter and must_not,
**                      as in Manticore
** Full-text parts join into the one MATCH (must: AND, should: OR,
** must_not: NOT), attribute parts into the WHERE; a should that mixes the
** two, or a must_not holding both, cannot be written so and is refused.
*/
#include <ctype.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "server/http/http_int.h"
#include "sql/parser.h"
#include "table/value.h"
#include "util/clock.h"

#define HS_MAX_DEPTH 32 /* nested bools */

typedef struct Tr {
    LpError *err;
    int depth;
} Tr;

static int tr_fail(Tr *t, const char *zFmt, ...) __attribute__((format(printf, 2, 3)));

/* Records a refusal (LP_BADINPUT) whose message is zFmt's. */
static int tr_fail(Tr *t, const char *zFmt, ...) {
    char zMsg[320];
    va_list ap;
    va_start(ap, zFmt);
    vsnprintf(zMsg, sizeof(zMsg), zFmt, ap);
    va_end(ap);
    return lp_err_set(t->err, LP_BADINPUT, "%s", zMsg);
}

/* Is z a plain name: a letter or '_', then letters, digits and '_'? */
static int is_name(const char *z, size_t n) {
    if (n == 0 || n > 64 || !(isalpha((unsigned char)z[0]) || z[0] == '_')) return 0;
    for (size_t i = 1; i < n; i++) {
        if (!isalnum((unsigned char)z[i]) && z[i] != '_') return 0;
    }
    return 1;
}

/* `name`, refused unless it is a plain name. */
static int put_ident(Tr *t, StrBuf *sb, const char *z, size_t n, const char *zWhat) {
    if (!is_name(z, n)) {
        char zName[72];
        snprintf(zName, sizeof(zName), "%.*s", (int)(n > 64 ? 64 : n), z);
        return tr_fail(t, "%s '%s' is not a name (letters, digits and '_')", zWhat, zName);
    }
    strbuf_appendc(sb, '`');
    strbuf_append(sb, z, n);
    strbuf_appendc(sb, '`');
    return LP_OK;
}

/* An attribute, or a JSON column's property by a dotted path ("attrs.color",
** each part a plain name), as backquoted SQL names joined by '.'. */
static int put_attr(Tr *t, StrBuf *sb, const char *z, size_t n, const char *zWhat) {
    for (size_t i = 0;;) {
        const char *dot = memchr(z + i, '.', n - i);
        size_t len = dot ? (size_t)(dot - (z + i)) : n - i;
        if (!is_name(z + i, len)) {
            char zName[72];
            snprintf(zName, sizeof(zName), "%.*s", (int)(n > 64 ? 64 : n), z);
            return tr_fail(t, "%s '%s' is not a name (letters, digits and '_'), or a JSON path of them "
                              "joined by '.'", zWhat, zName);
        }
        if (i) strbuf_appendc(sb, '.');
        strbuf_appendc(sb, '`');
        strbuf_append(sb, z + i, len);
        strbuf_appendc(sb, '`');
        if (!dot) return LP_OK;
        i += len + 1;
    }
}

/* A filter's attribute: a name or path as put_attr, or Manticore's
** any(tags) / all(tags) of a multi-value. */
static int put_filter_attr(Tr *t, StrBuf *sb, const char *z, size_t n, const char *zWhat) {
    if (n > 5 && z[n - 1] == ')' && (!strncasecmp(z, "any(", 4) || !strncasecmp(z, "all(", 4))) {
        strbuf_appendz(sb, tolower((unsigned char)z[1]) == 'n' ? "ANY(" : "ALL(");
        if (put_attr(t, sb, z + 4, n - 5, zWhat)) return t->err->code;
        strbuf_appendc(sb, ')');
        return LP_OK;
    }
    return put_attr(t, sb, z, n, zWhat);
}

/* 'z' as an SQL string literal. */
static void put_str(StrBuf *sb, const char *z, size_t n) {
    strbuf_appendc(sb, '\'');
    for (size_t i = 0; i < n; i++) {
        if (z[i] == '\'' || z[i] == '\\') strbuf_appendc(sb, '\\');
        strbuf_appendc(sb, z[i]);
    }
    strbuf_appendc(sb, '\'');
}

int http_sql_scalar(StrBuf *sb, const void *pv) {
    const json_t *v = pv;
    switch (json_typeof(v)) {
    case JSON_INTEGER: strbuf_appendf(sb, "%lld", (long long)json_integer_value(v)); return 1;
    case JSON_REAL: strbuf_appendf(sb, "%.17g", json_real_value(v)); return 1;
    case JSON_STRING: put_str(sb, json_string_value(v), json_string_length(v)); return 1;
    case JSON_TRUE: strbuf_appendc(sb, '1'); return 1;
    case JSON_FALSE: strbuf_appendc(sb, '0'); return 1;
    default: return 0;
    }
}

/* A JSON scalar as an SQL value. */
static int put_value(Tr *t, StrBuf *sb, const json_t *v, const char *zKey) {
    if (http_sql_scalar(sb, v)) return LP_OK;
    return tr_fail(t, "'%s' takes a number, a string or a boolean", zKey);
}

/* Characters that are operators in MATCH text; a match query's words are
** words only, so these read as spaces there. */
static int is_op_char(char c) {
    return strchr("\\()|-!@~\"&/^$=<>*?%[]{}:,'+", c) != NULL || c == 0;
}

/* The words of z[0..n) joined by zSep, each with ^boost when boost is not
** 1; operator words (MAYBE, NEAR, ...) lower-cased so they stay words.
** Returns how many words. */
static int put_words(StrBuf *sb, const char *z, size_t n, const char *zSep, double boost) {
    static const char *const azOp[] = {"MAYBE", "NEAR", "NOTNEAR", "SENTENCE", "PARAGRAPH",
                                       "ZONE", "ZONESPAN", "REGEX"};
    int nWord = 0;
    size_t i = 0;
    while (i < n) {
        while (i < n && (is_op_char(z[i]) || isspace((unsigned char)z[i]))) i++;
        size_t a = i;
        while (i < n && !is_op_char(z[i]) && !isspace((unsigned char)z[i])) i++;
        if (i == a) break;
        if (nWord++) strbuf_appendz(sb, zSep);
        int bOp = 0;
        for (size_t k = 0; k < sizeof(azOp) / sizeof(azOp[0]); k++) {
            bOp |= strlen(azOp[k]) == i - a && memcmp(azOp[k], z + a, i - a) == 0;
        }
        for (size_t k = a; k < i; k++) strbuf_appendc(sb, bOp ? (char)tolower((unsigned char)z[k]) : z[k]);
        if (boost != 1) strbuf_appendf(sb, "^%g", boost);
    }
    return nWord;
}

/* A match or match_phrase field key: "" for every field, else "@f ",
** "@(f1,f2) " or "@!f ". */
static int put_fields(Tr *t, StrBuf *sb, const char *zKey) {
    if (!strcmp(zKey, "*") || !strcmp(zKey, "_all")) return LP_OK;
    int bNot = zKey[0] == '!';
    const char *z = zKey + bNot;
    int bList = strchr(z, ',') != NULL;
    strbuf_appendz(sb, bNot ? "@!" : "@");
    if (bList) strbuf_appendc(sb, '(');
    for (int k = 0; *z || k == 0; k++) {
        while (*z == ' ') z++;
        size_t m = strcspn(z, ",");
        size_t e = m;
        while (e > 0 && z[e - 1] == ' ') e--;
        if (!is_name(z, e)) return tr_fail(t, "field list '%s': expected field names separated by ','", zKey);
        if (k) strbuf_appendc(sb, ',');
        strbuf_append(sb, z, e);
        z += m;
        if (*z == ',') z++;
    }
    if (bList) strbuf_appendc(sb, ')');
    strbuf_appendc(sb, ' ');
    return LP_OK;
}

/* The one key of an object such as {"field": ...}; NULL (error set)
** otherwise. */
static const char *only_key(Tr *t, const json_t *o, const char *zWhat, json_t **ppVal) {
    if (!json_is_object(o) || json_object_size(o) != 1) {
        tr_fail(t, "'%s' takes an object with one key", zWhat);
        return NULL;
    }
    const char *zKey = json_object_iter_key(json_object_iter((json_t *)o));
    *ppVal = json_object_iter_value(json_object_iter((json_t *)o));
    return zKey;
}

static int tr_query(Tr *t, const json_t *q, StrBuf *ft, StrBuf *filt);

static int tr_match(Tr *t, const json_t *v, int bPhrase, StrBuf *ft) {
    const char *zOp = bPhrase ? "match_phrase" : "match";
    json_t *spec;
    const char *zKey = only_key(t, v, zOp, &spec);
    if (!zKey) return t->err->code;
    const char *zText = NULL;
    size_t nText = 0;
    double boost = 1;
    int bAnd = 0;
    if (json_is_string(spec)) {
        zText = json_string_value(spec);
        nText = json_string_length(spec);
    } else if (json_is_object(spec) && !bPhrase) {
        const char *k;
        json_t *x;
        json_object_foreach(spec, k, x) {
            if (!strcmp(k, "query") && json_is_string(x)) {
                zText = json_string_value(x);
                nText = json_string_length(x);
            } else if (!strcmp(k, "operator") && json_is_string(x) &&
                       (!strcasecmp(json_string_value(x), "and") || !strcasecmp(json_string_value(x), "or"))) {
                bAnd = !strcasecmp(json_string_value(x), "and");
            } else if (!strcmp(k, "boost") && json_is_number(x) && json_number_value(x) > 0 &&
                       json_number_value(x) <= 1000) {
                boost = json_number_value(x);
            } else {
                return tr_fail(t, "match: unknown or bad key '%s': expected query (a string), operator "
                               "('or' or 'and') or boost (a number above 0, at most 1000)", k);
            }
        }
        if (!zText) return tr_fail(t, "match: %sthe object needs a query string", "");
    } else {
        return tr_fail(t, "%s: expected {\"field\": \"text\"}", zOp);
    }
    strbuf_appendc(ft, '(');
    if (put_fields(t, ft, zKey)) return t->err->code;
    if (bPhrase) strbuf_appendc(ft, '"');
    int nWord = put_words(ft, zText, nText, bPhrase || bAnd ? " " : " | ", boost);
    if (bPhrase) strbuf_appendc(ft, '"');
    strbuf_appendc(ft, ')');
    if (nWord == 0) return tr_fail(t, "%s: the text has no words", zOp);
    return LP_OK;
}

static int tr_filter(Tr *t, const char *zOp, const json_t *v, StrBuf *filt) {
    json_t *arg;
    const char *zCol = only_key(t, v, zOp, &arg);
    if (!zCol) return t->err->code;
    if (!strcmp(zOp, "equals")) {
        if (put_filter_attr(t, filt, zCol, strlen(zCol), "equals: attribute")) return t->err->code;
        strbuf_appendz(filt, " = ");
        return put_value(t, filt, arg, "equals");
    }
    if (!strcmp(zOp, "in")) {
        if (!json_is_array(arg) || json_array_size(arg) == 0) {
            return tr_fail(t, "in: '%s' takes a non-empty list of values", zCol);
        }
        if (put_filter_attr(t, filt, zCol, strlen(zCol), "in: attribute")) return t->err->code;
        strbuf_appendz(filt, " IN (");
        for (size_t i = 0; i < json_array_size(arg); i++) {
            if (i) strbuf_appendz(filt, ", ");
            if (put_value(t, filt, json_array_get(arg, i), "in")) return t->err->code;
        }
        strbuf_appendc(filt, ')');
        return LP_OK;
    }
    /* range */
    if (!json_is_object(arg) || json_object_size(arg) == 0) {
        return tr_fail(t, "range: '%s' takes an object of gt, gte, lt and lte", zCol);
    }
    const char *k;
    json_t *x;
    int n = 0;
    json_object_foreach(arg, k, x) {
        const char *zCmp = !strcmp(k, "gt") ? " > " : !strcmp(k, "gte") ? " >= " : !strcmp(k, "lt") ? " < "
                           : !strcmp(k, "lte") ? " <= " : NULL;
        if (!zCmp) return tr_fail(t, "range: unknown bound '%s': expected gt, gte, lt or lte", k);
        if (n++) strbuf_appendz(filt, " AND ");
        if (put_filter_attr(t, filt, zCol, strlen(zCol), "range: attribute")) return t->err->code;
        strbuf_appendz(filt, zCmp);
        if (put_value(t, filt, x, "range")) return t->err->code;
    }
    return LP_OK;
}

/* A latitude/longitude pair as Manticore's geo_distance takes it: {"lat":
** a, "lon": b}, "a, b" or [b, a] (longitude first). For the anchor (bName
** 0) each is a number (or a string of one); for the source (bName 1) an
** attribute's name or path. Their texts into zLat and zLon (GEO_TEXT bytes). */
#define GEO_TEXT 128
static int geo_pair(Tr *t, const json_t *v, int bName, const char *zWhat, char *zLat, char *zLon) {
    const json_t *a[2] = {NULL, NULL}; /* lat, lon */
    const char *az[2] = {NULL, NULL};
    size_t an[2] = {0, 0};
    if (json_is_object(v) && json_object_size(v) == 2) {
        a[0] = json_object_get(v, "lat");
        a[1] = json_object_get(v, "lon");
    } else if (json_is_array(v) && json_array_size(v) == 2) {
        a[1] = json_array_get(v, 0);
        a[0] = json_array_get(v, 1);
    } else if (json_is_string(v) && strchr(json_string_value(v), ',')) {
        const char *z = json_string_value(v), *c = strchr(z, ',');
        az[0] = z, an[0] = (size_t)(c - z);
        az[1] = c + 1, an[1] = strlen(c + 1);
    }
    for (int i = 0; i < 2; i++) {
        char *zOut = i ? zLon : zLat;
        if (a[i] && json_is_number(a[i]) && !bName) {
            snprintf(zOut, GEO_TEXT, "%.17g", json_number_value(a[i]));
            continue;
        }
        if (a[i] && json_is_string(a[i])) az[i] = json_string_value(a[i]), an[i] = json_string_length(a[i]);
        while (an[i] && *az[i] == ' ') az[i]++, an[i]--;
        while (an[i] && az[i][an[i] - 1] == ' ') an[i]--;
        int bOk = az[i] && an[i] > 0 && an[i] < GEO_TEXT && (bName || http_json_is_number(az[i], an[i]));
        if (!bOk) {
            return tr_fail(t, bName ? "geo_distance: %s takes {\"lat\": \"attr\", \"lon\": \"attr\"}, "
                                      "\"lat_attr, lon_attr\" or [\"lon_attr\", \"lat_attr\"]"
                                    : "geo_distance: %s takes {\"lat\": number, \"lon\": number}, \"lat, lon\" "
                                      "or [lon, lat] (degrees)",
                           zWhat);
        }
        memcpy(zOut, az[i], an[i]);
        zOut[an[i]] = 0;
    }
    return LP_OK;
}

/* A geo distance (a number: metres; a string: a number and a unit, "100 km")
** in metres into *pM. */
static int geo_metres(Tr *t, const json_t *v, double *pM) {
    static const struct {
        const char *z;
        double m;
    } aUnit[] = {
        {"m", 1},          {"meters", 1},      {"km", 1000},     {"kilometers", 1000}, {"cm", 0.01},
        {"centimeters", 0.01}, {"mm", 0.001},  {"millimeters", 0.001}, {"mi", 1609.344}, {"miles", 1609.344},
        {"yd", 0.9144},    {"yards", 0.9144},  {"ft", 0.3048},   {"feet", 0.3048},     {"in", 0.0254},
        {"inch", 0.0254},  {"nm", 1852},       {"nmi", 1852},    {"nauticalmiles", 1852},
    };
    if (json_is_number(v)) {
        *pM = json_number_value(v);
    } else if (json_is_string(v)) {
        const char *z = json_string_value(v);
        char *end;
        *pM = strtod(z, &end);
        while (*end == ' ') end++;
        if (end == z) return tr_fail(t, "geo_distance: distance '%.40s' is not a number and a unit", z);
        if (*end) {
            size_t u = 0;
            while (u < sizeof(aUnit) / sizeof(aUnit[0]) && strcasecmp(end, aUnit[u].z) != 0) u++;
            if (u == sizeof(aUnit) / sizeof(aUnit[0])) {
                return tr_fail(t, "geo_distance: unknown unit '%.20s': expected m, km, cm, mm, mi, yd, ft, in or "
                               "nmi (or meters, kilometers, miles, ...)", end);
            }
            *pM *= aUnit[u].m;
        }
    } else {
        return tr_fail(t, "geo_distance: distance takes metres, or a string like \"100 km\"");
    }
    if (!(*pM >= 0) || *pM > 1e12) return tr_fail(t, "geo_distance: the distance must be 0 or more");
    return LP_OK;
}

/* GEODIST(source, anchor, {in=degrees, out=m, method=...}) of a
** geo_distance object (filter) or a _geo_distance sort key, into sb;
** *pM the distance asked for when bDistance. */
static int put_geodist(Tr *t, const json_t *v, int bDistance, double *pM, StrBuf *sb) {
    if (!json_is_object(v)) return tr_fail(t, "geo_distance takes an object: location_anchor, location_source, distance");
    const json_t *anchor = NULL, *source = NULL, *dist = NULL;
    const char *zMethod = "adaptive", *k;
    json_t *x;
    json_object_foreach((json_t *)v, k, x) {
        if (!strcmp(k, "location_anchor")) anchor = x;
        else if (!strcmp(k, "location_source")) source = x;
        else if (!strcmp(k, "distance") && bDistance) dist = x;
        else if (!strcmp(k, "order") && !bDistance && json_is_string(x) &&
                 (!strcasecmp(json_string_value(x), "asc") || !strcasecmp(json_string_value(x), "desc"))) {
            continue; /* the sort key's direction: tr_sort reads it */
        }
        else if (!strcmp(k, "distance_type") && json_is_string(x) &&
                 (!strcmp(json_string_value(x), "adaptive") || !strcmp(json_string_value(x), "haversine"))) {
            zMethod = json_string_value(x);
        } else {
            return tr_fail(t, "geo_distance: unknown or bad key '%s': expected location_anchor, location_source, "
                           "distance_type (adaptive or haversine)%s", k,
                           bDistance ? " and distance" : " and order (asc or desc)");
        }
    }
    if (!anchor || !source || (bDistance && !dist)) {
        return tr_fail(t, "geo_distance needs location_anchor, location_source%s", bDistance ? " and distance" : "");
    }
    char zSLat[GEO_TEXT], zSLon[GEO_TEXT], zALat[GEO_TEXT], zALon[GEO_TEXT];
    if (geo_pair(t, source, 1, "location_source", zSLat, zSLon) ||
        geo_pair(t, anchor, 0, "location_anchor", zALat, zALon) || (bDistance && geo_metres(t, dist, pM))) {
        return t->err->code;
    }
    strbuf_appendz(sb, "GEODIST(");
    if (put_attr(t, sb, zSLat, strlen(zSLat), "geo_distance: location_source")) return t->err->code;
    strbuf_appendz(sb, ", ");
    if (put_attr(t, sb, zSLon, strlen(zSLon), "geo_distance: location_source")) return t->err->code;
    strbuf_appendf(sb, ", %s, %s", zALat, zALon);
    strbuf_appendf(sb, ", {in=degrees, out=m, method=%s})", zMethod);
    return LP_OK;
}

/* Appends "(part)" joined to what sb holds by zSep. */
static void join(StrBuf *sb, const char *zSep, const StrBuf *part, const char *zPre) {
    if (!part->n) return;
    if (sb->n) strbuf_appendz(sb, zSep);
    strbuf_appendz(sb, zPre);
    strbuf_appendc(sb, '(');
    strbuf_append(sb, part->z, part->n);
    strbuf_appendc(sb, ')');
}

static int tr_bool(Tr *t, const json_t *v, StrBuf *ft, StrBuf *filt) {
    if (!json_is_object(v)) return tr_fail(t, "bool takes an object of must, should, must_not and filter");
    static const char *const azPart[] = {"must", "filter", "must_not", "should"};
    const json_t *aPart[4] = {0};
    const char *k;
    json_t *x;
    json_object_foreach((json_t *)v, k, x) {
        size_t i = 0;
        while (i < 4 && strcmp(k, azPart[i]) != 0) i++;
        if (i == 4) return tr_fail(t, "bool: unknown key '%s': expected must, should, must_not or filter", k);
        aPart[i] = x;
    }
    /* should matters only when nothing else is given, as in Manticore */
    int bShould = aPart[3] && !aPart[0] && !aPart[1] && !aPart[2];
    int rc = LP_OK;
    StrBuf sft = {0}, sfilt = {0};
    for (int i = 0; i < 4 && rc == LP_OK; i++) {
        if (!aPart[i] || (i == 3 && !bShould)) continue;
        size_t n = json_is_array(aPart[i]) ? json_array_size(aPart[i]) : 1;
        StrBuf oft = {0}, ofilt = {0}; /* should: the ORs */
        int nFt = 0, nFilt = 0;
        for (size_t j = 0; j < n && rc == LP_OK; j++) {
            const json_t *c = json_is_array(aPart[i]) ? json_array_get(aPart[i], j) : aPart[i];
            strbuf_reset(&sft);
            strbuf_reset(&sfilt);
            if ((rc = tr_query(t, c, &sft, &sfilt)) != LP_OK) break;
            nFt += sft.n > 0;
            nFilt += sfilt.n > 0;
            if (i == 2 && sft.n && sfilt.n) {
                rc = tr_fail(t, "bool: a must_not query holds both full-text and attribute conditions; "
                             "give them as two must_not queries");
            } else if (i == 3) {
                join(&oft, " | ", &sft, "");
                join(&ofilt, " OR ", &sfilt, "");
            } else {
                join(ft, " ", &sft, i == 2 ? "-" : "");
                join(filt, " AND ", &sfilt, i == 2 ? "NOT " : "");
            }
        }
        if (rc == LP_OK && i == 3) {
            if (nFt && nFilt) {
                rc = tr_fail(t, "bool: should mixes full-text queries and attribute filters, which "
                             "cannot be ORed (as in Manticore)");
            }
            join(ft, " ", &oft, "");
            join(filt, " AND ", &ofilt, "");
        }
        strbuf_free(&oft);
        strbuf_free(&ofilt);
    }
    strbuf_free(&sft);
    strbuf_free(&sfilt);
    return rc;
}

static int tr_query(Tr *t, const json_t *q, StrBuf *ft, StrBuf *filt) {
    json_t *v;
    const char *zOp = only_key(t, q, "query", &v);
    if (!zOp) return t->err->code;
    if (++t->depth > HS_MAX_DEPTH) return tr_fail(t, "query nests deeper than %d levels", HS_MAX_DEPTH);
    int rc;
    if (!strcmp(zOp, "match_all")) {
        rc = json_is_object(v) ? LP_OK : tr_fail(t, "match_all takes {}");
    } else if (!strcmp(zOp, "match") || !strcmp(zOp, "match_phrase")) {
        rc = tr_match(t, v, zOp[5] == '_', ft);
    } else if (!strcmp(zOp, "query_string")) {
        const json_t *s = json_is_object(v) ? json_object_get(v, "query") : v;
        if (!json_is_string(s) || (json_is_object(v) && json_object_size(v) != 1)) {
            rc = tr_fail(t, "query_string takes a string, or {\"query\": \"...\"}");
        } else {
            strbuf_appendc(ft, '(');
            strbuf_append(ft, json_string_value(s), json_string_length(s));
            strbuf_appendc(ft, ')');
            rc = LP_OK;
        }
    } else if (!strcmp(zOp, "equals") || !strcmp(zOp, "in") || !strcmp(zOp, "range")) {
        rc = tr_filter(t, zOp, v, filt);
    } else if (!strcmp(zOp, "geo_distance")) {
        double m = 0;
        rc = put_geodist(t, v, 1, &m, filt);
        if (rc == LP_OK) strbuf_appendf(filt, " <= %.17g", m);
    } else if (!strcmp(zOp, "bool")) {
        rc = tr_bool(t, v, ft, filt);
    } else {
        rc = tr_fail(t, "unknown query '%s': expected match, match_phrase, query_string, match_all, "
                     "equals, in, range, geo_distance or bool", zOp);
    }
    t->depth--;
    return rc;
}

/* "knn": {"field": "v", "query_vector": [..] | "query": [..] or "text" |
** "doc_id": id, "k": 10, "ef": 200} as knn(`v`, k, ...) (k defaults to
** the rows asked for). */
static int tr_knn(Tr *t, const json_t *kn, int64_t kDefault, StrBuf *sb) {
    if (json_is_array(kn)) { /* several: ANDed, each a search of the fusion */
        if (json_array_size(kn) == 0) return tr_fail(t, "knn: the list is empty");
        for (size_t i = 0; i < json_array_size(kn); i++) {
            if (i) strbuf_appendz(sb, " AND ");
            if (json_is_array(json_array_get(kn, i))) return tr_fail(t, "knn: a list of objects, not of lists");
            int rc = tr_knn(t, json_array_get(kn, i), kDefault, sb);
            if (rc != LP_OK) return rc;
        }
        return LP_OK;
    }
    if (!json_is_object(kn)) return tr_fail(t, "knn takes an object: {\"field\": ..., \"query_vector\": [...]}");
    const json_t *f = NULL, *qv = NULL, *k = NULL, *ef = NULL, *name = NULL;
    const char *key;
    json_t *x;
    json_object_foreach((json_t *)kn, key, x) {
        if (!strcmp(key, "field")) f = x;
        else if (!strcmp(key, "query_vector") || !strcmp(key, "query") || !strcmp(key, "doc_id")) {
            if (qv) return tr_fail(t, "knn: give one of query_vector, query and doc_id");
            qv = x;
        } else if (!strcmp(key, "k")) k = x;
        else if (!strcmp(key, "ef")) ef = x;
        else if (!strcmp(key, "name")) name = x;
        else return tr_fail(t, "knn: unknown key '%s': expected field, query_vector, query, doc_id, k, ef or name", key);
    }
    if (!json_is_string(f)) return tr_fail(t, "knn needs \"field\": the vector column");
    if (!qv) return tr_fail(t, "knn needs query_vector (numbers), query (numbers or a text) or doc_id");
    strbuf_appendz(sb, "knn(");
    if (put_ident(t, sb, json_string_value(f), json_string_length(f), "knn: field")) return t->err->code;
    if (k && (!json_is_integer(k) || json_integer_value(k) < 1 || json_integer_value(k) > 100000)) {
        return tr_fail(t, "knn: k takes a whole number from 1 to 100000");
    }
    strbuf_appendf(sb, ", %lld, ", (long long)(k ? json_integer_value(k) : kDefault < 1 ? 1 : kDefault));
    if (json_is_array(qv)) {
        strbuf_appendc(sb, '(');
        for (size_t i = 0; i < json_array_size(qv); i++) {
            const json_t *e = json_array_get(qv, i);
            if (!json_is_number(e)) return tr_fail(t, "knn: the query vector takes numbers only");
            strbuf_appendf(sb, "%s%.9g", i ? ", " : "", json_number_value(e));
        }
        strbuf_appendc(sb, ')');
    } else if (json_is_string(qv) || json_is_integer(qv)) {
        if (put_value(t, sb, qv, "knn")) return t->err->code;
    } else {
        return tr_fail(t, "knn: the query is a list of numbers, a text or a row id");
    }
    if (ef) {
        if (!json_is_integer(ef)) return tr_fail(t, "knn: ef takes a whole number");
        strbuf_appendf(sb, ", {ef=%lld}", (long long)json_integer_value(ef));
    }
    strbuf_appendc(sb, ')');
    if (name) { /* for fusion_weights; "query" is the text search's */
        if (!json_is_string(name) || !is_name(json_string_value(name), json_string_length(name)) ||
            !strcmp(json_string_value(name), "query")) {
            return tr_fail(t, "knn: name takes a name other than 'query' (the full-text query's)");
        }
        strbuf_appendf(sb, " AS %s", json_string_value(name));
    }
    return LP_OK;
}

/* "hybrid": {"query": "text", "field": "v", "k": 10} as hybrid_match(). */
static int tr_hybrid(Tr *t, const json_t *h, StrBuf *sb) {
    const json_t *q = json_object_get(h, "query"), *f = json_object_get(h, "field"), *k = json_object_get(h, "k");
    if (!json_is_object(h) || !json_is_string(q) ||
        json_object_size(h) != (size_t)(1 + (f != NULL) + (k != NULL))) {
        return tr_fail(t, "hybrid takes {\"query\": \"text\"} and optionally field and k");
    }
    strbuf_appendz(sb, "hybrid_match(");
    put_str(sb, json_string_value(q), json_string_length(q));
    if (f) {
        if (!json_is_string(f)) return tr_fail(t, "hybrid: field takes a column name");
        strbuf_appendz(sb, ", ");
        if (put_ident(t, sb, json_string_value(f), json_string_length(f), "hybrid: field")) return t->err->code;
    }
    if (k) {
        if (!json_is_integer(k) || json_integer_value(k) < 1 || json_integer_value(k) > 100000) {
            return tr_fail(t, "hybrid: k takes a whole number from 1 to 100000");
        }
        strbuf_appendf(sb, ", {k=%lld}", (long long)json_integer_value(k));
    }
    strbuf_appendc(sb, ')');
    return LP_OK;
}

/* An OPTION value from JSON. */
/* Does zPre, the text of string v, then zPost parse as one SELECT whose
** shape xShape accepts? Text a client writes into the statement is
** checked so: a quote, comment or clause in it cannot reach past its
** place. The parser's message, if it refused, is in *perr. */
static int fragment_ok(const char *zPre, const json_t *v, const char *zPost, int (*xShape)(const SelectStmt *),
                       LpError *perr) {
    StrBuf q = {0};
    strbuf_appendz(&q, zPre);
    strbuf_append(&q, json_string_value(v), json_string_length(v));
    strbuf_appendz(&q, zPost);
    Arena a;
    arena_init(&a, 4096);
    SqlStmt *pStmt = NULL;
    lp_err_clear(perr);
    int bOk = !q.oom && sql_parse(&a, q.z, q.n, &pStmt, perr) == LP_OK && pStmt->kind == STMT_SELECT &&
              xShape(&pStmt->u.select);
    arena_free(&a);
    strbuf_free(&q);
    return bOk;
}

/* SELECT 1 FROM t OPTION ranker=...: the option and nothing after it. */
static int ranker_alone(const SelectStmt *s) {
    return s->nOption == 1 && !s->nFacet;
}

/* SELECT (expr) AS e: that one item, nothing else. */
static int one_item_e(const SelectStmt *s) {
    return s->nItem == 1 && s->aItem[0].pExpr && s->aItem[0].zAlias && !strcmp(s->aItem[0].zAlias, "e") && !s->zTable &&
           !s->nOption && !s->nFacet && s->iLimit < 0 && !s->nOrder;
}

static int put_option(Tr *t, StrBuf *sb, const char *zKey, const json_t *v) {
    if (!is_name(zKey, strlen(zKey))) return tr_fail(t, "options: '%s' is not an option name", zKey);
    strbuf_appendz(sb, zKey);
    strbuf_appendc(sb, '=');
    if (json_is_string(v) && !strcmp(zKey, "ranker") &&
        (!strncmp(json_string_value(v), "expr(", 5) || !strncmp(json_string_value(v), "export(", 7))) {
        /* ranker=expr('...') as written: checked as the fragment it becomes */
        LpError perr;
        if (!fragment_ok("SELECT 1 FROM t OPTION ranker=", v, "", ranker_alone, &perr)) {
            return tr_fail(t, "options: ranker takes a name or expr('...'): %s", perr.zMsg[0] ? perr.zMsg : "more follows it");
        }
        strbuf_append(sb, json_string_value(v), json_string_length(v));
        return LP_OK;
    }
    if (json_is_object(v)) { /* field_weights=(title=2, body=1) */
        const char *k;
        json_t *x;
        int n = 0;
        strbuf_appendc(sb, '(');
        json_object_foreach((json_t *)v, k, x) {
            if (!is_name(k, strlen(k)) || !json_is_number(x)) {
                return tr_fail(t, "options: '%s' takes an object of names and numbers", zKey);
            }
            strbuf_appendf(sb, "%s%s=", n++ ? ", " : "", k);
            if (put_value(t, sb, x, zKey)) return t->err->code;
        }
        strbuf_appendc(sb, ')');
        return LP_OK;
    }
    return put_value(t, sb, v, zKey);
}

static int get_count(Tr *t, const json_t *req, const char *zA, const char *zB, int64_t *pv) {
    const json_t *v = json_object_get(req, zA);
    const char *zName = zA;
    if (!v) v = json_object_get(req, zName = zB);
    if (!v) return LP_OK;
    if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > 100000000) {
        return tr_fail(t, "'%s' takes a whole number from 0 to 100000000", zName);
    }
    *pv = json_integer_value(v);
    return LP_OK;
}

/* The highlight request: one HIGHLIGHT() per field, as select items. */
static int tr_highlight(Tr *t, const json_t *h, StrBuf *sel, HttpSearch *s) {
    if (!json_is_object(h)) return tr_fail(t, "highlight takes an object");
    StrBuf opts = {0};
    const char *k;
    json_t *x;
    int rc = LP_OK, n = 0;
    json_object_foreach((json_t *)h, k, x) {
        if (!strcmp(k, "fields")) continue;
        /* Elasticsearch's names for Manticore's options */
        const char *zName = !strcmp(k, "pre_tags") ? "before_match" : !strcmp(k, "post_tags") ? "after_match"
                            : !strcmp(k, "fragment_size") ? "limit" : !strcmp(k, "number_of_fragments")
                            ? "limit_passages" : k;
        if (!is_name(zName, strlen(zName))) {
            rc = tr_fail(t, "highlight: '%s' is not an option name", k);
            break;
        }
        strbuf_appendf(&opts, "%s%s=", n++ ? ", " : "", zName);
        const json_t *val = json_is_array(x) && json_array_size(x) == 1 ? json_array_get(x, 0) : x;
        if ((rc = put_value(t, &opts, val, k)) != LP_OK) break;
    }
    const json_t *f = json_object_get(h, "fields");
    json_t *aName = json_array();
    if (!aName) rc = lp_err_set(t->err, LP_NOMEM, "out of memory");
    if (rc == LP_OK && f) {
        if (json_is_array(f)) {
            for (size_t i = 0; i < json_array_size(f); i++) {
                const json_t *e = json_array_get(f, i);
                if (!json_is_string(e)) {
                    rc = tr_fail(t, "highlight: fields takes names");
                    break;
                }
                json_array_append(aName, (json_t *)e);
            }
        } else if (json_is_object(f)) {
            json_object_foreach((json_t *)f, k, x) {
                json_array_append_new(aName, json_string(k));
            }
        } else if (json_is_string(f)) {
            json_array_append(aName, (json_t *)f);
        } else {
            rc = tr_fail(t, "highlight: fields takes a list of names, or an object of them");
        }
    }
    /* no fields named: HIGHLIGHT() over every stored field, as one */
    if (rc == LP_OK && json_array_size(aName) == 0) json_array_append_new(aName, json_string(""));
    for (size_t i = 0; rc == LP_OK && i < json_array_size(aName); i++) {
        const char *zField = json_string_value(json_array_get(aName, i));
        strbuf_appendz(sel, ", HIGHLIGHT({");
        strbuf_append(sel, opts.z ? opts.z : "", opts.n);
        strbuf_appendz(sel, "}");
        if (*zField) {
            strbuf_appendz(sel, ", ");
            if (!is_name(zField, strlen(zField))) rc = tr_fail(t, "highlight: '%s' is not a field name", zField);
            put_str(sel, zField, strlen(zField));
        }
        strbuf_appendc(sel, ')');
    }
    strbuf_free(&opts);
    if (rc == LP_OK) {
        s->pHl = aName;
        s->nHl = (int)json_array_size(aName);
    } else {
        json_decref(aName);
    }
    return rc;
}

/* _source: which columns to fetch (sel gets ", `a`, `b`" or ", *"). */
static int tr_source(Tr *t, const json_t *src, StrBuf *sel, HttpSearch *s) {
    const json_t *inc = src, *exc = NULL;
    s->bSource = 1;
    if (!src || json_is_true(src)) {
        strbuf_appendz(sel, ", *");
        return LP_OK;
    }
    if (json_is_false(src)) {
        s->bSource = 0;
        return LP_OK;
    }
    if (json_is_object(src)) {
        inc = json_object_get(src, "includes");
        exc = json_object_get(src, "excludes");
        if (json_object_size(src) != (size_t)(!!inc + !!exc)) {
            return tr_fail(t, "_source: expected includes and excludes");
        }
        if (exc && !json_is_array(exc) && !json_is_string(exc)) {
            return tr_fail(t, "_source: excludes takes a list of names");
        }
        if (exc) s->pExclude = json_incref((json_t *)exc);
    }
    if (!inc || (json_is_array(inc) && json_array_size(inc) == 0)) {
        strbuf_appendz(sel, ", *");
        return LP_OK;
    }
    size_t n = json_is_array(inc) ? json_array_size(inc) : 1;
    for (size_t i = 0; i < n; i++) {
        const json_t *e = json_is_array(inc) ? json_array_get(inc, i) : inc;
        if (!json_is_string(e)) return tr_fail(t, "_source takes true, false, names, or includes and excludes");
        if (!strcmp(json_string_value(e), "*")) {
            strbuf_appendz(sel, ", *");
            continue;
        }
        if (!strcmp(json_string_value(e), "id")) continue; /* the id is _id */
        strbuf_appendz(sel, ", ");
        if (put_ident(t, sel, json_string_value(e), json_string_length(e), "_source: column")) return t->err->code;
    }
    return LP_OK;
}

/* "expressions": {"name": "SQL expression", ...}: computed columns, as
** Manticore's: each `, (expr) AS name` in the select list (so in _source,
** and usable by name in sort and aggs). Each expression must read alone as
** one select item (checked by parsing "SELECT (expr) AS e": the fragment
** as it will stand, so a comment or a quote cannot reach past it). ex may
** hold script_fields' too (tr_script_fields): sf, when not NULL, names
** them for the errors. */
static int tr_expressions(Tr *t, const json_t *ex, const json_t *sf, StrBuf *sel) {
    if (!json_is_object(ex)) return tr_fail(t, "expressions takes an object: {\"name\": \"expression\"}");
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)ex, k, v) {
        if (!json_is_string(v)) return tr_fail(t, "expressions: '%.64s' takes the expression as a string", k);
        LpError perr; /* the fragment as it will stand in the SELECT */
        if (!fragment_ok("SELECT (", v, ") AS e", one_item_e, &perr)) {
            /* named as the request wrote it */
            return tr_fail(t, "%s: '%.64s' is not one expression%s%s",
                           sf && json_object_get(sf, k) ? "script_fields" : "expressions", k,
                           perr.zMsg[0] ? ": " : "", perr.zMsg);
        }
        strbuf_appendz(sel, ", (");
        strbuf_append(sel, json_string_value(v), json_string_length(v));
        strbuf_appendz(sel, ") AS ");
        if (put_ident(t, sel, k, strlen(k), "expressions: name")) return t->err->code;
    }
    return LP_OK;
}

/* "script_fields": {"name": {"script": {"inline": "SQL expression"}}}:
** Manticore's older spelling of "expressions" (only inline scripts, as
** there). *pAll gets a new object (the caller's to free) holding ex's
** expressions (ex may be NULL) and these, which is what the rest of the
** translation reads; a name in both is an error. */
static int tr_script_fields(Tr *t, const json_t *sf, const json_t *ex, json_t **pAll) {
    if (!json_is_object(sf)) {
        return tr_fail(t, "script_fields takes an object: {\"name\": {\"script\": {\"inline\": \"expression\"}}}");
    }
    if (ex && !json_is_object(ex)) return tr_fail(t, "expressions takes an object: {\"name\": \"expression\"}");
    json_t *all = ex ? json_copy((json_t *)ex) : json_object();
    if (!all) return lp_err_set(t->err, LP_NOMEM, "out of memory");
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)sf, k, v) {
        const json_t *sc = json_is_object(v) ? json_object_get(v, "script") : NULL;
        const json_t *in = json_is_object(sc) ? json_object_get(sc, "inline") : NULL;
        int rc = LP_OK;
        if (!json_is_string(in) || json_object_size(v) != 1 || json_object_size(sc) != 1) {
            rc = tr_fail(t, "script_fields: '%.64s' takes {\"script\": {\"inline\": \"expression\"}} (only "
                         "inline scripts, as in Manticore)", k);
        } else if (json_object_get(all, k)) {
            rc = tr_fail(t, "script_fields: '%.64s' is also in expressions", k);
        } else if (json_object_set(all, k, (json_t *)in)) {
            rc = lp_err_set(t->err, LP_NOMEM, "out of memory");
        }
        if (rc != LP_OK) {
            json_decref(all);
            return rc;
        }
    }
    *pAll = all;
    return LP_OK;
}

static int tr_sort(Tr *t, const json_t *sort, StrBuf *sb) {
    size_t n = json_is_array(sort) ? json_array_size(sort) : 1;
    for (size_t i = 0; i < n; i++) {
        const json_t *e = json_is_array(sort) ? json_array_get(sort, i) : sort;
        const char *zKey = NULL, *zDir = NULL, *zMode = NULL;
        const json_t *geo = json_is_object(e) && json_object_size(e) == 1 ? json_object_get(e, "_geo_distance") : NULL;
        if (geo) { /* nearest first, unless "order": "desc" */
            const json_t *o = json_is_object(geo) ? json_object_get(geo, "order") : NULL;
            strbuf_appendz(sb, i ? ", " : " ORDER BY ");
            if (put_geodist(t, geo, 0, NULL, sb)) return t->err->code;
            strbuf_appendz(sb, o && !strcasecmp(json_string_value(o), "desc") ? " DESC" : " ASC");
            continue;
        }
        if (json_is_string(e)) {
            zKey = json_string_value(e);
        } else if (json_is_object(e) && json_object_size(e) == 1) {
            json_t *d = NULL;
            zKey = only_key(t, e, "sort", &d);
            const json_t *m = json_is_object(d) ? json_object_get(d, "mode") : NULL;
            if (m) { /* a multi-value sorted by its least or greatest item */
                zMode = json_is_string(m) ? json_string_value(m) : "";
                if (strcmp(zMode, "min") != 0 && strcmp(zMode, "max") != 0) {
                    return tr_fail(t, "sort: '%s' takes \"mode\": \"min\" or \"max\"", zKey);
                }
                if (json_object_size(d) == 2) d = json_object_get(d, "order");
            }
            if (json_is_object(d) && json_object_size(d) == 1) d = json_object_get(d, "order");
            if (!json_is_string(d)) return tr_fail(t, "sort: '%s' takes \"asc\", \"desc\" or {\"order\": ...}", zKey);
            zDir = json_string_value(d);
            if (strcasecmp(zDir, "asc") != 0 && strcasecmp(zDir, "desc") != 0) {
                return tr_fail(t, "sort: expected asc or desc, got '%s'", zDir);
            }
        } else {
            return tr_fail(t, "sort takes names, {\"name\": \"asc\"|\"desc\"}, or a list of them");
        }
        int bScore = !strcmp(zKey, "_score");
        strbuf_appendz(sb, i ? ", " : " ORDER BY ");
        if (bScore) {
            strbuf_appendz(sb, "WEIGHT()");
        } else if (!strcmp(zKey, "_id")) {
            strbuf_appendz(sb, "id");
        } else {
            if (zMode) strbuf_appendz(sb, zMode[1] == 'i' ? "LEAST(" : "GREATEST(");
            if (put_attr(t, sb, zKey, strlen(zKey), "sort: column")) return t->err->code;
            if (zMode) strbuf_appendc(sb, ')');
        }
        strbuf_appendz(sb, zDir ? (strcasecmp(zDir, "asc") ? " DESC" : " ASC") : bScore ? " DESC" : " ASC");
    }
    return LP_OK;
}

/* The FACET's expression of an aggregation's field: an "expressions" name
** (the expression, named so) or an attribute. */
static int put_agg_field(Tr *t, const json_t *f, const json_t *ex, StrBuf *sql) {
    const json_t *e = json_is_object(ex) ? json_object_get(ex, json_string_value(f)) : NULL;
    if (!json_is_string(e)) return put_attr(t, sql, json_string_value(f), json_string_length(f), "aggs: field");
    strbuf_appendc(sql, '(');
    strbuf_append(sql, json_string_value(e), json_string_length(e));
    strbuf_appendz(sql, ") AS ");
    return put_ident(t, sql, json_string_value(f), json_string_length(f), "aggs: field");
}

/* A terms aggregation's order: a sort list, or terms.order, as ORDER BY. */
static int put_terms_order(Tr *t, const char *zName, const json_t *f, const json_t *by, StrBuf *sql) {
    const char *zKey = NULL, *zDir = "asc";
    json_t *d = NULL;
    if (json_is_object(by) && json_object_size(by) == 1) {
        zKey = json_object_iter_key(json_object_iter((json_t *)by));
        d = json_object_iter_value(json_object_iter((json_t *)by));
        if (json_is_object(d)) d = json_object_get(d, "order");
        zDir = json_is_string(d) ? json_string_value(d) : NULL;
    }
    if (!zKey || !zDir || (strcasecmp(zDir, "asc") && strcasecmp(zDir, "desc"))) {
        return tr_fail(t, "aggs: '%s': sort takes one {\"key\": \"asc\"|\"desc\"}", zName);
    }
    if (!strcmp(zKey, "count(*)") || !strcmp(zKey, "_count")) {
        strbuf_appendf(sql, " ORDER BY COUNT(*) %s", strcasecmp(zDir, "asc") ? "DESC" : "ASC");
    } else if (!strcmp(zKey, "_key") || !strcmp(zKey, json_string_value(f))) {
        strbuf_appendf(sql, " ORDER BY FACET() %s", strcasecmp(zDir, "asc") ? "DESC" : "ASC");
    } else {
        return tr_fail(t, "aggs: '%s': sort by the field, count(*), _key or _count", zName);
    }
    return LP_OK;
}

/* A number of a request as SQL and JSON text: integers as they are, other
** numbers in the fewest digits that read back the same. */
static void put_number(StrBuf *sb, const json_t *v) {
    if (json_is_integer(v)) {
        strbuf_appendf(sb, "%lld", (long long)json_integer_value(v));
        return;
    }
    char buf[32];
    double d = json_number_value(v);
    for (int p = 15; p <= 17; p++) {
        snprintf(buf, sizeof(buf), "%.*g", p, d);
        if (strtod(buf, NULL) == d) break;
    }
    strbuf_appendz(sb, buf);
}

/* A date_range's bound: a number (unix seconds) or a string of date math
** (value_date_math, now the request's), into *pv as seconds. */
static int tr_date_bound(Tr *t, const char *zName, size_t iRange, const char *zEnd, const json_t *v, int64_t now,
                         json_t **pv) {
    if (json_is_number(v)) {
        *pv = json_incref((json_t *)v);
        return LP_OK;
    }
    if (!json_is_string(v)) {
        return tr_fail(t, "aggs: '%s': date_range %zu: %s: expected date math (\"now-1M/M\") or unix seconds",
                       zName, iRange + 1, zEnd);
    }
    int64_t sec = 0;
    int at = 0;
    const char *zWhy = value_date_math(json_string_value(v), now, &sec, &at);
    if (zWhy) {
        return tr_fail(t, "aggs: '%s': date_range %zu: %s: %s in '%.64s'", zName, iRange + 1, zEnd, zWhy,
                       json_string_value(v));
    }
    *pv = json_integer(sec);
    return *pv ? LP_OK : lp_err_set(t->err, LP_NOMEM, "out of memory");
}

/* Manticore's bucket aggregations as FACETs of HISTOGRAM(), RANGE(),
** DATE_HISTOGRAM() and DATE_RANGE(): {"histogram": {"field", "interval",
** "offset"}}, {"range": {"field", "ranges": [{"from", "to"}, ...]}},
** {"date_histogram": {"field", "calendar_interval" | "fixed_interval"}},
** {"date_range": {"field", "ranges": [...]}} (bounds in date math or unix
** seconds, resolved here: the answer gives them), each with "keyed";
** ordered by their keys, every bucket (10000 at most). *pInfo gets what the
** answer needs: the kind, keyed, the ranges. */
static int tr_bucket_agg(Tr *t, const char *zName, const char *zKind, const json_t *h, const json_t *ex, StrBuf *sql,
                         json_t *info) {
    const json_t *f = json_is_object(h) ? json_object_get(h, "field") : NULL;
    const json_t *keyed = json_is_object(h) ? json_object_get(h, "keyed") : NULL;
    if (!json_is_string(f)) return tr_fail(t, "aggs: '%s': %s needs a \"field\"", zName, zKind);
    if (keyed && !json_is_boolean(keyed)) return tr_fail(t, "aggs: '%s': keyed is true or false", zName);
    json_object_set_new(info, "keyed", json_boolean(json_is_true(keyed)));
    const char *k;
    json_t *x;
    int bDates = !strcmp(zKind, "date_range"), bRanges = bDates || !strcmp(zKind, "range");
    json_object_foreach((json_t *)h, k, x) {
        static const char *const azOk[] = {"field", "keyed", "interval", "offset", "ranges", "calendar_interval",
                                           "fixed_interval"};
        int bOk = 0;
        for (size_t i = 0; i < sizeof(azOk) / sizeof(azOk[0]); i++) bOk |= !strcmp(k, azOk[i]);
        bOk &= zKind[0] == 'h' ? strcmp(k, "ranges") && !strstr(k, "_interval")
               : bRanges      ? strcmp(k, "interval") && strcmp(k, "offset") && !strstr(k, "_interval")
                              : strcmp(k, "interval") && strcmp(k, "offset") && strcmp(k, "ranges");
        if (!bOk) return tr_fail(t, "aggs: '%s': %s takes no '%s'", zName, zKind, k);
    }
    strbuf_appendz(sql, zKind[0] == 'h' ? " FACET HISTOGRAM("
                        : bDates       ? " FACET DATE_RANGE("
                        : bRanges      ? " FACET RANGE("
                                       : " FACET DATE_HISTOGRAM(");
    if (put_agg_field(t, f, ex, sql)) return t->err->code;
    if (zKind[0] == 'h') {
        const json_t *iv = json_object_get(h, "interval"), *off = json_object_get(h, "offset");
        if (!json_is_number(iv) || !(json_number_value(iv) > 0)) {
            return tr_fail(t, "aggs: '%s': histogram needs an interval above 0", zName);
        }
        if (off && (!json_is_number(off) || json_number_value(off) < 0 || json_number_value(off) >= json_number_value(iv))) {
            return tr_fail(t, "aggs: '%s': histogram's offset is from 0 to below its interval", zName);
        }
        strbuf_appendz(sql, ", {hist_interval=");
        put_number(sql, iv);
        if (off) {
            strbuf_appendz(sql, ", hist_offset=");
            put_number(sql, off);
        }
        strbuf_appendc(sql, '}');
    } else if (bRanges) {
        const json_t *ranges = json_object_get(h, "ranges");
        if (!json_is_array(ranges) || json_array_size(ranges) == 0 || json_array_size(ranges) > 1000) {
            return tr_fail(t, "aggs: '%s': %s needs \"ranges\": a list of {\"from\": a, \"to\": b} (1 to 1000)",
                           zName, zKind);
        }
        json_t *aRange = json_array();
        json_object_set_new(info, "ranges", aRange);
        int64_t now = lp_unix_now();
        for (size_t i = 0; i < json_array_size(ranges); i++) {
            const json_t *r = json_array_get(ranges, i);
            const json_t *from = json_is_object(r) ? json_object_get(r, "from") : NULL;
            const json_t *to = json_is_object(r) ? json_object_get(r, "to") : NULL;
            int bShape = json_is_object(r) && (from || to) && json_object_size(r) == (size_t)(!!from + !!to);
            /* a date range's bounds as numbers (date math resolved), owned by aRange */
            json_t *aEnd[2] = {NULL, NULL};
            int rc = LP_OK;
            if (bShape && bDates && from) rc = tr_date_bound(t, zName, i, "from", from, now, &aEnd[0]);
            if (bShape && bDates && to && rc == LP_OK) rc = tr_date_bound(t, zName, i, "to", to, now, &aEnd[1]);
            if (bDates) from = aEnd[0], to = aEnd[1];
            json_array_append_new(aRange, json_pack("[OO]", from ? (json_t *)from : json_null(),
                                                    to ? (json_t *)to : json_null()));
            json_decref(aEnd[0]);
            json_decref(aEnd[1]);
            if (rc != LP_OK) return rc;
            if (!bShape || (from && !json_is_number(from)) || (to && !json_is_number(to)) ||
                (from && to && !(json_number_value(from) < json_number_value(to)))) {
                return tr_fail(t, bDates ? "aggs: '%s': date_range %zu takes {\"from\": a, \"to\": b} (date math or "
                                           "unix seconds, a before b; one may be left out)"
                                         : "aggs: '%s': range %zu takes {\"from\": a, \"to\": b} (numbers, a below "
                                           "b; one may be left out)",
                               zName, i + 1);
            }
            strbuf_appendz(sql, ", {");
            if (from) {
                strbuf_appendz(sql, "range_from=");
                put_number(sql, from);
            }
            if (to) {
                strbuf_appendz(sql, from ? ", range_to=" : "range_to=");
                put_number(sql, to);
            }
            strbuf_appendc(sql, '}');
        }
    } else {
        const json_t *cal = json_object_get(h, "calendar_interval"), *fix = json_object_get(h, "fixed_interval");
        const json_t *iv = cal ? cal : fix;
        if ((cal && fix) || !json_is_string(iv) || json_string_length(iv) > 32 ||
            strspn(json_string_value(iv), "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") !=
                json_string_length(iv)) {
            return tr_fail(t, "aggs: '%s': date_histogram needs calendar_interval (\"month\") or fixed_interval (\"3h\")",
                           zName);
        }
        strbuf_appendf(sql, ", {%s='%s'}", cal ? "calendar_interval" : "fixed_interval", json_string_value(iv));
    }
    strbuf_appendz(sql, ") ORDER BY FACET() ASC LIMIT 10000");
    return LP_OK;
}

/* "aggs": {"name": {"terms": {"field": "brand", "size": 10}, "sort": [...]}}:
** one FACET each, appended to the SELECT in sql (one statement: the
** bucket lists share one run of the search, a knn text is embedded once),
** what each is into s->pAggs. A bucket list is sorted by its key
** ({"brand": "asc"} in sort) or its count ({"count(*)": "desc"}, or
** Elasticsearch's terms.order {"_count": "desc"} / {"_key": "asc"}), else
** left in the order of the groups' best rows; size defaults to the
** request's limit (20 when that is 0). histogram, range, date_histogram
** and date_range are tr_bucket_agg's. */
static int tr_aggs(Tr *t, const json_t *ag, const json_t *ex, StrBuf *sql, int64_t limit, HttpSearch *s) {
    if (!json_is_object(ag)) return tr_fail(t, "aggs takes an object of named aggregations");
    json_t *out = json_array();
    if (!out) return lp_err_set(t->err, LP_NOMEM, "out of memory");
    s->pAggs = out;
    const char *zName;
    json_t *a;
    json_object_foreach((json_t *)ag, zName, a) {
        json_t *info = json_pack("{s:s}", "name", zName);
        if (!info || json_array_append_new(out, info)) return lp_err_set(t->err, LP_NOMEM, "out of memory");
        static const char *const azKind[] = {"histogram", "range", "date_histogram", "date_range"};
        for (size_t i = 0; i < sizeof(azKind) / sizeof(azKind[0]); i++) {
            const json_t *h = json_is_object(a) ? json_object_get(a, azKind[i]) : NULL;
            if (!h) continue;
            if (json_object_size(a) != 1) return tr_fail(t, "aggs: '%s': %s takes no sort or other key", zName, azKind[i]);
            json_object_set_new(info, "kind", json_string(azKind[i]));
            if (tr_bucket_agg(t, zName, azKind[i], h, ex, sql, info)) return t->err->code;
            break;
        }
        if (json_object_get(info, "kind")) continue;
        const json_t *terms = json_is_object(a) ? json_object_get(a, "terms") : NULL;
        const json_t *f = terms ? json_object_get(terms, "field") : NULL;
        const json_t *size = terms ? json_object_get(terms, "size") : NULL;
        const json_t *order = terms ? json_object_get(terms, "order") : NULL;
        const json_t *sort = json_is_object(a) ? json_object_get(a, "sort") : NULL;
        if (!json_is_string(f)) {
            return tr_fail(t, "aggs: '%s' takes {\"terms\": {\"field\": \"attribute\", \"size\": N}}, or a "
                           "histogram, range, date_histogram or date_range", zName);
        }
        if (size && (!json_is_integer(size) || json_integer_value(size) < 0 ||
                     json_integer_value(size) > 100000)) {
            return tr_fail(t, "aggs: '%s': size takes a whole number from 0 to 100000", zName);
        }
        strbuf_appendz(sql, " FACET ");
        if (put_agg_field(t, f, ex, sql)) return t->err->code;
        const json_t *by = sort ? (json_is_array(sort) && json_array_size(sort) == 1 ? json_array_get(sort, 0) : sort)
                                : order;
        if (by && put_terms_order(t, zName, f, by, sql)) return t->err->code;
        int64_t n = size ? json_integer_value(size) : limit > 0 ? limit : 20;
        strbuf_appendf(sql, " LIMIT %lld", (long long)n);
    }
    return LP_OK;
}

int http_search_sql(const char *z, size_t n, StrBuf *pSql, HttpSearch *s, LpError *err) {
    memset(s, 0, sizeof(*s));
    Tr t = {err, 0};
    json_error_t jerr;
    json_t *req = json_loadb(z, n, JSON_REJECT_DUPLICATES, &jerr);
    if (!req) return lp_err_set(err, LP_BADINPUT, "the request is not JSON: %s at byte %d", jerr.text, jerr.position);
    int rc = LP_OK;
    StrBuf ft = {0}, filt = {0}, sel = {0}, tail = {0}, from = {0}, opt = {0};
    const char *zTable = NULL;
    json_t *exAll = NULL; /* expressions and script_fields together */
    if (!json_is_object(req)) {
        rc = tr_fail(&t, "the request is not a JSON object");
        goto done;
    }
    static const char *const azKey[] = {"table", "index", "query", "limit", "size", "offset", "from", "sort",
                                        "_source", "highlight", "options", "track_scores", "profile",
                                        "max_matches", "knn", "hybrid", "aggs", "expressions", "script_fields"};
    const char *k;
    json_t *x;
    json_object_foreach(req, k, x) {
        size_t i = 0;
        while (i < sizeof(azKey) / sizeof(azKey[0]) && strcmp(k, azKey[i]) != 0) i++;
        if (i == sizeof(azKey) / sizeof(azKey[0])) {
            rc = tr_fail(&t, "unknown key '%s': expected table, query, knn, hybrid, limit, offset, sort, "
                         "_source, expressions, script_fields, highlight, aggs or options", k);
            goto done;
        }
    }
    const json_t *jt = json_object_get(req, "table");
    if (!jt) jt = json_object_get(req, "index");
    if (!json_is_string(jt)) {
        rc = tr_fail(&t, "the request needs \"table\": the name of the table to search");
        goto done;
    }
    zTable = json_string_value(jt);
    const json_t *q = json_object_get(req, "query");
    if (q && (rc = tr_query(&t, q, &ft, &filt)) != LP_OK) goto done;
    int64_t limit = 20, offset = 0;
    if ((rc = get_count(&t, req, "limit", "size", &limit)) != LP_OK ||
        (rc = get_count(&t, req, "offset", "from", &offset)) != LP_OK) {
        goto done;
    }
    /* a vector search, or hybrid_match(): more conditions of the WHERE */
    StrBuf vec = {0};
    const json_t *kn = json_object_get(req, "knn"), *hy = json_object_get(req, "hybrid");
    if (kn && hy) rc = tr_fail(&t, "give knn or hybrid, not both (hybrid is a text query and its vector search)");
    if (rc == LP_OK && kn) rc = tr_knn(&t, kn, offset + limit, &vec);
    if (rc == LP_OK && hy) rc = tr_hybrid(&t, hy, &vec);
    if (rc == LP_OK && vec.n) {
        if (filt.n) strbuf_appendz(&vec, " AND ");
        strbuf_append(&vec, filt.z ? filt.z : "", filt.n);
        strbuf_free(&filt);
        filt = vec;
        vec = (StrBuf){0};
        s->bKnn = 1;
        /* a hybrid search: hybrid_match(), or a full-text query or more
        ** knn beside knn, with a fusion_method (without one: one knn among
        ** the text's rows) */
        const json_t *opts = json_object_get(req, "options");
        s->bHybrid = hy != NULL || ((ft.n > 0 || (json_is_array(kn) && json_array_size(kn) > 1)) &&
                                    json_is_object(opts) && json_object_get(opts, "fusion_method"));
    }
    strbuf_free(&vec);
    if (rc != LP_OK) goto done;
    if (s->bKnn) strbuf_appendz(&sel, ", KNN_DIST()");
    if (s->bHybrid) strbuf_appendz(&sel, ", HYBRID_SCORE()");
    if ((rc = tr_source(&t, json_object_get(req, "_source"), &sel, s)) != LP_OK) goto done;
    const json_t *ex = json_object_get(req, "expressions");
    const json_t *sf = json_object_get(req, "script_fields");
    if (sf) {
        if ((rc = tr_script_fields(&t, sf, ex, &exAll)) != LP_OK) goto done;
        ex = exAll;
    }
    if (ex && (rc = tr_expressions(&t, ex, exAll ? sf : NULL, &sel)) != LP_OK) goto done;
    const json_t *h = json_object_get(req, "highlight");
    if (h && (rc = tr_highlight(&t, h, &sel, s)) != LP_OK) goto done;
    const json_t *so = json_object_get(req, "sort");
    if (so && (rc = tr_sort(&t, so, &tail)) != LP_OK) goto done;
    strbuf_appendf(&tail, " LIMIT %lld, %lld", (long long)offset, (long long)limit);
    const json_t *o = json_object_get(req, "options");
    const json_t *mm = json_object_get(req, "max_matches");
    if (o && !json_is_object(o)) {
        rc = tr_fail(&t, "options takes an object");
        goto done;
    }
    int nOpt = 0;
    if (o) {
        json_object_foreach((json_t *)o, k, x) {
            strbuf_appendz(&opt, nOpt++ ? ", " : " OPTION ");
            if ((rc = put_option(&t, &opt, k, x)) != LP_OK) goto done;
        }
    }
    if (mm) {
        strbuf_appendz(&opt, nOpt++ ? ", " : " OPTION ");
        if ((rc = put_option(&t, &opt, "max_matches", mm)) != LP_OK) goto done;
    }
    /* FROM and WHERE */
    strbuf_appendz(&from, " FROM ");
    if ((rc = put_ident(&t, &from, zTable, strlen(zTable), "table")) != LP_OK) goto done;
    if (ft.n || filt.n) strbuf_appendz(&from, " WHERE ");
    if (ft.n) {
        strbuf_appendz(&from, "MATCH(");
        put_str(&from, ft.z, ft.n);
        /* beside knn, "query" names it for fusion_weights, as Manticore's */
        strbuf_appendz(&from, s->bKnn && !json_object_get(req, "hybrid") ? ") AS query" : ")");
    }
    if (filt.n) {
        strbuf_appendz(&from, ft.n ? " AND (" : "(");
        strbuf_append(&from, filt.z, filt.n);
        strbuf_appendc(&from, ')');
    }
    /* id, WEIGHT(), then the source columns and the highlights */
    strbuf_appendz(pSql, "SELECT id, WEIGHT()");
    strbuf_append(pSql, sel.z ? sel.z : "", sel.n);
    strbuf_append(pSql, from.z, from.n);
    strbuf_append(pSql, tail.z ? tail.z : "", tail.n);
    strbuf_append(pSql, opt.z ? opt.z : "", opt.n);
    const json_t *ag = json_object_get(req, "aggs");
    if (ag && (rc = tr_aggs(&t, ag, ex, pSql, limit, s)) != LP_OK) goto done;
    if (pSql->oom || ft.oom || filt.oom || sel.oom || tail.oom || from.oom || opt.oom) {
        rc = lp_err_set(err, LP_NOMEM, "out of memory");
    }
done:
    if (rc == LP_OK) {
        snprintf(s->zTable, sizeof(s->zTable), "%s", zTable);
    } else {
        http_search_free(s);
    }
    strbuf_free(&ft);
    strbuf_free(&filt);
    strbuf_free(&sel);
    strbuf_free(&tail);
    strbuf_free(&from);
    strbuf_free(&opt);
    json_decref(exAll);
    json_decref(req);
    return rc;
}

int http_search_where(const void *q, StrBuf *pWhere, LpError *err) {
    Tr t = {err, 0};
    StrBuf ft = {0}, filt = {0};
    int rc = tr_query(&t, q, &ft, &filt);
    if (rc == LP_OK && ft.n) {
        strbuf_appendz(pWhere, "MATCH(");
        put_str(pWhere, ft.z, ft.n);
        strbuf_appendc(pWhere, ')');
    }
    if (rc == LP_OK && filt.n) {
        strbuf_appendz(pWhere, ft.n ? " AND (" : "(");
        strbuf_append(pWhere, filt.z, filt.n);
        strbuf_appendc(pWhere, ')');
    }
    if (rc == LP_OK && (ft.oom || filt.oom || pWhere->oom)) rc = lp_err_set(err, LP_NOMEM, "out of memory");
    strbuf_free(&ft);
    strbuf_free(&filt);
    return rc;
}

void http_sql_str(StrBuf *sb, const char *z, size_t n) {
    put_str(sb, z, n);
}

int http_sql_ident(StrBuf *sb, const char *z, size_t n, const char *zWhat, LpError *err) {
    Tr t = {err, 0};
    return put_ident(&t, sb, z, n, zWhat);
}

void http_search_free(HttpSearch *s) {
    json_decref(s->pHl);
    json_decref(s->pExclude);
    json_decref(s->pAggs);
    s->pHl = s->pExclude = s->pAggs = NULL;
    s->nHl = 0;
}

/* Is column zName one that excludes names? */
static int excluded(const HttpSearch *s, const char *zName) {
    const json_t *ex = s->pExclude;
    if (!ex) return 0;
    if (json_is_string(ex)) return !strcmp(json_string_value(ex), zName);
    for (size_t i = 0; i < json_array_size(ex); i++) {
        const json_t *e = json_array_get(ex, i);
        if (json_is_string(e) && !strcmp(json_string_value(e), zName)) return 1;
    }
    return 0;
}

int http_search_naggs(const HttpSearch *s) {
    return s->pAggs ? (int)json_array_size(s->pAggs) : 0;
}

/* Unix time t as ISO 8601 in UTC (a time's key_as_string). */
static void put_iso_time(StrBuf *sb, int64_t t) {
    char buf[32];
    time_t tt = (time_t)t;
    struct tm tm;
    if (gmtime_r(&tt, &tm) && strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm)) strbuf_appendz(sb, buf);
}

/* One bucket's key, as a keyed list names it: the key's text (a time's
** as key_as_string), or a range's "from-to" ("*" where open; a date
** range's bounds as times). */
static void bucket_name(StrBuf *sb, const json_t *info, const char *zKind, const SqlCell *key, size_t iRange) {
    if (!strcmp(zKind, "range") || !strcmp(zKind, "date_range")) {
        const json_t *rg = json_array_get(json_object_get(info, "ranges"), iRange);
        for (int e = 0; e < 2; e++) {
            const json_t *v = json_array_get(rg, (size_t)e);
            if (e) strbuf_appendc(sb, '-');
            if (json_is_null(v)) strbuf_appendc(sb, '*');
            else if (zKind[0] == 'd') put_iso_time(sb, (int64_t)json_number_value(v));
            else put_number(sb, v);
        }
    } else if (zKind[0] == 'd') {
        put_iso_time(sb, strtoll(key->z ? key->z : "0", NULL, 10));
    } else if (key->z) {
        strbuf_append(sb, key->z, key->n);
    } else {
        strbuf_appendz(sb, "null");
    }
}

/* An aggregation's buckets from its FACET's rows g (key, count): a list, or
** with "keyed" an object of them by name. A range aggregation has one
** bucket per range, in the request's order, empty ones too; a histogram's
** rows without the field (a NULL key) are in none. */
static void agg_buckets(StrBuf *sb, const json_t *info, const SqlResult *g) {
    const json_t *kind = json_object_get(info, "kind");
    const char *zKind = json_is_string(kind) ? json_string_value(kind) : "terms";
    int bKeyed = json_is_true(json_object_get(info, "keyed"));
    const json_t *ranges = json_object_get(info, "ranges");
    int bRanges = !strcmp(zKind, "range") || !strcmp(zKind, "date_range"), bDates = !strcmp(zKind, "date_range");
    size_t nRow = g->kind == SQLRES_ROWS && g->nCol == 2 ? g->nRow : 0;
    size_t n = bRanges ? json_array_size(ranges) : nRow;
    StrBuf name = {0};
    strbuf_appendc(sb, bKeyed ? '{' : '[');
    int nOut = 0;
    for (size_t i = 0; i < n; i++) {
        const SqlCell *a = bRanges ? NULL : g->aCell + i * 2, *cnt = a ? &a[1] : NULL;
        if (a && !a[0].z && zKind[0] != 't') continue; /* rows without the field: in no bucket, as in Elasticsearch */
        SqlCell zero = {"0", 1};
        if (bRanges) { /* the row whose key is this range's index */
            cnt = &zero;
            for (size_t j = 0; j < nRow; j++) {
                const SqlCell *c = g->aCell + j * 2;
                if (c->z && strtoll(c->z, NULL, 10) == (long long)i) cnt = &c[1];
            }
        }
        strbuf_reset(&name);
        bucket_name(&name, info, zKind, a ? &a[0] : NULL, i);
        if (nOut++) strbuf_appendc(sb, ',');
        if (bKeyed) {
            http_json_str(sb, name.z ? name.z : "", name.n);
            strbuf_appendc(sb, ':');
        }
        strbuf_appendc(sb, '{');
        if (bRanges) {
            const json_t *rg = json_array_get(ranges, i);
            if (!bKeyed) {
                strbuf_appendz(sb, "\"key\":");
                http_json_str(sb, name.z ? name.z : "", name.n);
                strbuf_appendc(sb, ',');
            }
            for (int e = 0; e < 2; e++) {
                const json_t *v = json_array_get(rg, (size_t)e);
                if (json_is_null(v)) continue;
                strbuf_appendz(sb, e ? "\"to\":" : "\"from\":");
                put_number(sb, v);
                if (bDates) { /* and as a time, as Elasticsearch's */
                    strbuf_appendz(sb, e ? ",\"to_as_string\":\"" : ",\"from_as_string\":\"");
                    put_iso_time(sb, (int64_t)json_number_value(v));
                    strbuf_appendc(sb, '"');
                }
                strbuf_appendc(sb, ',');
            }
        } else {
            strbuf_appendz(sb, "\"key\":");
            http_json_cell(sb, g->aCol[0].type, &a[0]);
            if (zKind[0] == 'd') {
                strbuf_appendz(sb, ",\"key_as_string\":");
                http_json_str(sb, name.z ? name.z : "", name.n);
            }
            strbuf_appendc(sb, ',');
        }
        strbuf_appendz(sb, "\"doc_count\":");
        http_json_cell(sb, bRanges ? SQLCOL_BIGINT : g->aCol[1].type, cnt);
        strbuf_appendc(sb, '}');
    }
    strbuf_appendc(sb, bKeyed ? '}' : ']');
    if (name.oom) sb->oom = 1;
    strbuf_free(&name);
}

void http_search_answer(StrBuf *sb, const HttpSearch *s, const SqlResult *r, const char *zTotal,
                        const char *zRelation, int64_t tookMs) {
    strbuf_appendf(sb, "{\"took\":%lld,\"timed_out\":false,\"hits\":{\"total\":%s,\"total_relation\":",
                   (long long)tookMs, zTotal && http_json_is_number(zTotal, strlen(zTotal)) ? zTotal : "0");
    http_json_str(sb, zRelation ? zRelation : "eq", strlen(zRelation ? zRelation : "eq"));
    strbuf_appendz(sb, ",\"hits\":[");
    int iHl = r->nCol - s->nHl; /* id, WEIGHT(), [KNN_DIST(), HYBRID_SCORE(),] source, highlights */
    for (size_t iRow = 0; iRow < r->nRow && !sb->oom; iRow++) {
        const SqlCell *a = r->aCell + iRow * (size_t)r->nCol;
        strbuf_appendz(sb, iRow ? ",{\"_id\":" : "{\"_id\":");
        http_json_cell(sb, r->aCol[0].type, &a[0]);
        strbuf_appendz(sb, ",\"_score\":");
        http_json_cell(sb, r->aCol[1].type, &a[1]);
        int iSrc = 2;
        if (s->bKnn) {
            strbuf_appendz(sb, ",\"_knn_dist\":");
            http_json_cell(sb, r->aCol[iSrc].type, &a[iSrc]);
            iSrc++;
        }
        if (s->bHybrid) {
            strbuf_appendz(sb, ",\"_hybrid_score\":");
            http_json_cell(sb, r->aCol[iSrc].type, &a[iSrc]);
            iSrc++;
        }
        if (s->bSource) {
            strbuf_appendz(sb, ",\"_source\":{");
            int n = 0;
            for (int c = iSrc; c < iHl; c++) {
                /* SELECT id, WEIGHT(), * repeats the id: _id has it */
                if (!strcmp(r->aCol[c].zName, "id") || excluded(s, r->aCol[c].zName)) continue; /* (`id` is left out) */
                if (n++) strbuf_appendc(sb, ',');
                /* a column named in _source was sent as `name`: the result names it so */
                const char *zName = r->aCol[c].zName;
                size_t nName = strlen(zName);
                if (nName >= 2 && zName[0] == '`' && zName[nName - 1] == '`') zName++, nName -= 2;
                http_json_str(sb, zName, nName);
                strbuf_appendc(sb, ':');
                http_json_cell(sb, r->aCol[c].type, &a[c]);
            }
            strbuf_appendc(sb, '}');
        }
        if (s->nHl) {
            strbuf_appendz(sb, ",\"highlight\":{");
            for (int i = 0; i < s->nHl; i++) {
                const char *zField = json_string_value(json_array_get(s->pHl, (size_t)i));
                if (i) strbuf_appendc(sb, ',');
                /* no field named: the stored fields' text, under "*" */
                http_json_str(sb, *zField ? zField : "*", *zField ? strlen(zField) : 1);
                strbuf_appendz(sb, ":[");
                const SqlCell *c = &a[iHl + i];
                if (c->z) http_json_str(sb, c->z, c->n);
                strbuf_appendc(sb, ']');
            }
            strbuf_appendc(sb, '}');
        }
        strbuf_appendc(sb, '}');
    }
    strbuf_appendz(sb, "]}");
    const SqlResult *g = r->pNext;
    for (int i = 0; i < http_search_naggs(s) && g; i++, g = g->pNext) {
        const json_t *info = json_array_get(s->pAggs, (size_t)i);
        const char *zName = json_string_value(json_object_get(info, "name"));
        strbuf_appendz(sb, i ? "," : ",\"aggregations\":{");
        http_json_str(sb, zName, strlen(zName));
        strbuf_appendz(sb, ":{\"buckets\":");
        agg_buckets(sb, info, g);
        strbuf_appendc(sb, '}');
        if (i + 1 == http_search_naggs(s)) strbuf_appendc(sb, '}');
    }
    strbuf_appendc(sb, '}');
}

void http_search_error(StrBuf *sb, const char *zType, const char *zReason, const char *zTable) {
    strbuf_appendz(sb, "{\"error\":{\"type\":");
    http_json_str(sb, zType, strlen(zType));
    strbuf_appendz(sb, ",\"reason\":");
    http_json_str(sb, zReason, strlen(zReason));
    if (zTable && *zTable) {
        strbuf_appendz(sb, ",\"table\":");
        http_json_str(sb, zTable, strlen(zTable));
    }
    strbuf_appendz(sb, "},\"status\":400}");
}

/* -- /autocomplete -- */

int http_autocomplete_sql(const char *z, size_t n, StrBuf *pSql, LpError *err) {
    Tr t = {err, 0};
    json_error_t jerr;
    json_t *req = json_loadb(z, n, JSON_REJECT_DUPLICATES, &jerr);
    if (!req) return lp_err_set(err, LP_BADINPUT, "the request is not JSON: %s at byte %d", jerr.text, jerr.position);
    int rc = LP_OK;
    const char *k;
    json_t *x;
    if (!json_is_object(req)) {
        rc = tr_fail(&t, "the request is not a JSON object");
        goto done;
    }
    json_object_foreach(req, k, x) {
        if (strcmp(k, "table") != 0 && strcmp(k, "index") != 0 && strcmp(k, "query") != 0 &&
            strcmp(k, "options") != 0) {
            rc = tr_fail(&t, "unknown key '%s': expected table, query or options", k);
            goto done;
        }
    }
    const json_t *jt = json_object_get(req, "table");
    if (!jt) jt = json_object_get(req, "index");
    const json_t *jq = json_object_get(req, "query");
    const json_t *jo = json_object_get(req, "options");
    if (!json_is_string(jt)) {
        rc = tr_fail(&t, "the request needs \"table\": the name of the table");
        goto done;
    }
    if (!json_is_string(jq)) {
        rc = tr_fail(&t, "the request needs \"query\": the text being typed, a string");
        goto done;
    }
    if (jo && !json_is_object(jo)) {
        rc = tr_fail(&t, "\"options\" must be an object, such as {\"fuzziness\": 1}");
        goto done;
    }
    strbuf_appendz(pSql, "CALL AUTOCOMPLETE(");
    put_str(pSql, json_string_value(jq), json_string_length(jq));
    strbuf_appendz(pSql, ", ");
    put_str(pSql, json_string_value(jt), json_string_length(jt));
    json_object_foreach((json_t *)jo, k, x) {
        static const char *const azOpt[] = {"fuzziness", "preserve",      "append", "prepend",
                                            "expansion_len", "force_bigrams", "layouts"};
        size_t i = 0;
        while (i < LP_ARRAY_SIZE(azOpt) && strcmp(k, azOpt[i]) != 0) i++;
        if (i == LP_ARRAY_SIZE(azOpt)) {
            rc = tr_fail(&t, "unknown option '%s': expected fuzziness, preserve, append, prepend, expansion_len, "
                         "force_bigrams or layouts", k);
            goto done;
        }
        int bLayouts = i == LP_ARRAY_SIZE(azOpt) - 1;
        if (bLayouts ? !json_is_string(x) : !(json_is_integer(x) || json_is_boolean(x))) {
            rc = tr_fail(&t, "option '%s' must be %s", k, bLayouts ? "a string" : "an integer or a boolean");
            goto done;
        }
        strbuf_appendz(pSql, ", ");
        http_sql_scalar(pSql, x);
        strbuf_appendf(pSql, " AS %s", azOpt[i]);
    }
    strbuf_appendc(pSql, ')');
    if (pSql->oom) rc = lp_err_set(err, LP_NOMEM, "out of memory");
done:
    json_decref(req);
    return rc;
}
