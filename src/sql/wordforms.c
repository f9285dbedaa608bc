/*
** wordforms.c — the word forms, exceptions and stop words a CREATE TABLE
** names: files read, rules checked.
**
** A table keeps them in itself (the options wordforms_list,
** exceptions_list and stopwords_list of its schema, so in its manifest):
** CREATE TABLE reads the files the options wordforms, exceptions and
** stopwords name once, as Manticore copies them into the table's folder,
** and later changes to the files do not change the table. A file's text is
** kept line for line, its ';' escaped (in a file a ';' is an ordinary
** character, in a list it separates rules), so the rules mean what the
** file meant and errors can name its lines.
*/
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "sql/sql_int.h"
#include "text/analyzer.h"

/* The most bytes of rules a table keeps of one kind (files and list
** together). */
#define WORDFORMS_MAX_BYTES (8u << 20)

/* Appends the file at zPath to out, its ';' escaped. */
static int read_file(const char *zOption, const char *zPath, StrBuf *out, LpError *err) {
    FILE *f = fopen(zPath, "rb");
    if (!f) return lp_err_set(err, LP_BADINPUT, "%s file '%s': %s", zOption, zPath, strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        fclose(f);
        return lp_err_set(err, LP_BADINPUT, "%s: '%s' is not a file", zOption, zPath);
    }
    size_t nStart = out->n;
    char aBuf[8192];
    size_t n, iOff = 0;
    int rc = LP_OK, bEscaped = 0;
    while (rc == LP_OK && (n = fread(aBuf, 1, sizeof(aBuf), f)) > 0) {
        for (size_t i = 0; i < n; i++, iOff++) {
            char c = aBuf[i];
            if (c == 0) {
                rc = lp_err_set(err, LP_BADINPUT, "%s file '%s' holds a NUL byte at byte %zu", zOption, zPath, iOff);
                break;
            }
            if (c == ';' && !bEscaped) strbuf_appendc(out, '\\');
            strbuf_appendc(out, c);
            bEscaped = c == '\\' && !bEscaped;
        }
        if (out->n > WORDFORMS_MAX_BYTES) {
            rc = lp_err_set(err, LP_LIMIT, "%s: more than %u bytes of rules (at file '%s')", zOption,
                            WORDFORMS_MAX_BYTES, zPath);
        }
    }
    if (rc == LP_OK && ferror(f)) rc = lp_err_set(err, LP_IOERR, "%s file '%s': cannot read it", zOption, zPath);
    fclose(f);
    if (rc == LP_OK && out->oom) rc = lp_err_set(err, LP_NOMEM, "out of memory reading %s file '%s'", zOption, zPath);
    if (rc == LP_OK && out->n > nStart && out->z[out->n - 1] != '\n') strbuf_appendc(out, '\n');
    return rc;
}

/* Checks the rules z[0..) of option zOption ("wordforms", "exceptions",
** or "stopwords": a text of stop words)
** as the table's analyzer will read them
** (split into words as sp says), the errors prefixed with zWhat (NULL:
** none). */
static int check_rules(const char *zOption, const char *z, const AnalyzerConfig *sp, const char *zWhat, LpError *err) {
    int bExc = strcmp(zOption, "exceptions") == 0, bStop = strcmp(zOption, "stopwords") == 0;
    AnalyzerConfig cfg = *sp;
    cfg.zWordforms = bExc || bStop ? NULL : z;
    cfg.zExceptions = bExc ? z : NULL;
    cfg.zStopwordsList = bStop ? z : NULL;
    Analyzer *an = NULL;
    LpError e;
    lp_err_clear(&e);
    int rc = analyzer_new(&cfg, &an, &e);
    analyzer_free(an);
    if (rc == LP_OK) return LP_OK;
    if (rc == LP_NOMEM) return lp_err_set(err, LP_NOMEM, "out of memory reading %s", zOption);
    return zWhat ? lp_err_set(err, rc, "%s: %s", zWhat, e.zMsg) : lp_err_set(err, rc, "%s", e.zMsg);
}

int sqlx_rules_files(const char *zOption, const char *zPaths, const AnalyzerConfig *sp, StrBuf *out, LpError *err) {
    const char *p = zPaths;
    int nFile = 0;
    while (*p) {
        while (*p == ',' || *p == ' ' || *p == '\t') p++;
        if (!*p) break;
        const char *e = p;
        while (*e && *e != ',' && *e != ' ' && *e != '\t') e++;
        char zPat[4096];
        if ((size_t)(e - p) >= sizeof(zPat)) return lp_err_set(err, LP_BADINPUT, "%s: a path is too long", zOption);
        memcpy(zPat, p, (size_t)(e - p));
        zPat[e - p] = 0;
        p = e;
        if (zPat[0] != '/') {
            return lp_err_set(err, LP_BADINPUT,
                              "%s: '%s' is not an absolute path (a table reads its files once, when "
                              "it is created, by absolute paths)", zOption, zPat);
        }
        glob_t g;
        int grc = glob(zPat, GLOB_ERR, NULL, &g);
        if (grc == GLOB_NOMATCH) return lp_err_set(err, LP_BADINPUT, "%s: no file matches '%s'", zOption, zPat);
        if (grc != 0) {
            globfree(&g);
            return lp_err_set(err, grc == GLOB_NOSPACE ? LP_NOMEM : LP_BADINPUT, "%s: cannot read '%s'", zOption,
                              zPat);
        }
        int rc = LP_OK;
        for (size_t i = 0; i < g.gl_pathc && rc == LP_OK; i++) {
            /* each file checked alone, so that an error names its line */
            StrBuf one = {0};
            rc = read_file(zOption, g.gl_pathv[i], &one, err);
            if (rc == LP_OK) {
                char zWhat[4200];
                snprintf(zWhat, sizeof(zWhat), "file '%s'", g.gl_pathv[i]);
                rc = check_rules(zOption, one.z ? one.z : "", sp, zWhat, err);
            }
            if (rc == LP_OK) {
                strbuf_append(out, one.z, one.n);
                if (out->oom) rc = lp_err_set(err, LP_NOMEM, "out of memory reading %s", zOption);
                else if (out->n > WORDFORMS_MAX_BYTES)
                    rc = lp_err_set(err, LP_LIMIT, "%s: more than %u bytes of rules (at file '%s')", zOption,
                                    WORDFORMS_MAX_BYTES, g.gl_pathv[i]);
            }
            strbuf_free(&one);
            nFile++;
        }
        globfree(&g);
        if (rc != LP_OK) return rc;
    }
    if (nFile == 0) return lp_err_set(err, LP_BADINPUT, "%s: expected one or more absolute file paths", zOption);
    return LP_OK;
}

int sqlx_rules_list(const char *zOption, const char *zList, const AnalyzerConfig *sp, StrBuf *out, LpError *err) {
    int rc = check_rules(zOption, zList, sp, NULL, err);
    if (rc != LP_OK) return rc;
    strbuf_appendz(out, zList);
    /* one rule a line: the next option's rules start on a line of their
    ** own (a list that ends with a line break, as the table shows its
    ** own, gets no second one) */
    if (out->n && out->z[out->n - 1] != '\n') strbuf_appendc(out, '\n');
    if (out->oom) return lp_err_set(err, LP_NOMEM, "out of memory reading %s", zOption);
    if (out->n > WORDFORMS_MAX_BYTES) {
        return lp_err_set(err, LP_LIMIT, "%s: more than %u bytes of rules", zOption, WORDFORMS_MAX_BYTES);
    }
    return LP_OK;
}
