/*
** sql_int.h — internals shared by the SQL layer's files (session.c,
** exec.c, vars.c, show.c). Not for use outside src/sql.
*/
#ifndef LP_SQL_INT_H
#define LP_SQL_INT_H

#include <pthread.h>

#include "query/select.h"
#include "sql/ast.h"
#include "sql/result.h"
#include "sql/session.h"
#include "table/catalog.h"
#include "util/arena.h"
#include "util/vec.h"

/* MySQL error numbers loupe reports (result.c knows their SQLSTATEs). */
#define ER_OUTOFMEMORY        1037
#define ER_TOO_MANY_CONN      1040
#define ER_TABLE_EXISTS       1050
#define ER_BAD_TABLE          1051
#define ER_BAD_FIELD          1054
#define ER_DUP_FIELDNAME      1060
#define ER_DUP_ENTRY          1062
#define ER_PARSE              1064
#define ER_EMPTY_QUERY        1065
#define ER_UNKNOWN_ERROR      1105
#define ER_FIELD_TWICE        1110
#define ER_COUNT_MISMATCH     1136
#define ER_MIX_AGGREGATE      1140
#define ER_NO_SUCH_TABLE      1146
#define ER_UNKNOWN_SYSVAR     1193
#define ER_LOCAL_VARIABLE     1228
#define ER_WRONG_VALUE_VAR    1231
#define ER_DELETE_NO_WHERE    1175  /* MySQL's ER_UPDATE_WITHOUT_KEY_IN_SAFE_MODE */
#define ER_NOT_SUPPORTED      1235
#define ER_READONLY_VAR       1238
#define ER_OUT_OF_RANGE       1264
#define ER_BAD_VALUE          1366

/* A warning kept for SHOW WARNINGS. */
typedef struct SqlWarning {
    int code;
    char *zMsg;             /* malloc'd */
} SqlWarning;

/* A session or global variable override. */
typedef struct SqlVar {
    char *zName;            /* malloc'd, lower-case */
    char *zValue;           /* malloc'd text; NULL = SQL NULL */
    int bInt;               /* the value is an integer (typed as such) */
} SqlVar;

typedef VEC(SqlVar) SqlVarList;

struct SqlEngine {
    Catalog *pCatalog;
    Tpool *pPool;           /* work pool for large writes, or NULL */
    SqlStats stats;
    char *zVersion;         /* reported by VERSION() / @@version */
    uint32_t nMaxPacket;
    pthread_mutex_t mu;     /* guards globals */
    SqlVarList globals;     /* SET GLOBAL overrides */
};

/* What the last SELECT did (SHOW META). */
typedef struct SqlMeta {
    int bValid;
    QMeta q;                /* the query engine's counters and times */
    int64_t nsParse;        /* parsing the statement */
    uint64_t nTotal;        /* rows returned */
    uint64_t nTotalFound;   /* rows that matched */
    uint64_t nExamined;
    int64_t nsTotal;        /* wall time of the statement */
    const char *zPlan;      /* static string */
    int bMatch;             /* the query had a MATCH: for SHOW META's keyword
                            ** statistics, its table and text, kept in */
    char *zMatchTable;      /* malloc'd buffers the next query reuses */
    char *zMatch;
    size_t nMatch;
    size_t nMatchCap;
    unsigned matchFlags;    /* the FTS_MATCH_* flags it was parsed with */
    int nExpansionLimit;
    int bProfiled;          /* it ran with profiling on: SHOW PLAN and SHOW
                            ** PROFILE describe it */
    char *zProfilePlan;     /* its plan as EXPLAIN writes it (malloc'd), when
                            ** bProfiled */
    int64_t nsProfilePlan;  /* the time writing it took, left out of nsTotal */
} SqlMeta;

struct SqlSession {
    SqlEngine *e;
    uint32_t connId;
    char *zUser;            /* malloc'd, or NULL */
    char *zDb;              /* current database name, malloc'd */
    Arena stmt;             /* the current statement's tree, plan, values */
    struct EmbedMemo *pEmbedMemo; /* knn() texts this statement embedded (in stmt) */
    int bAutocommit;
    int bProfiling;         /* SET profiling=1: SELECTs keep their plan */
    int bDeferCommit;       /* sql_session_defer_commits */
    int bExplicitTxn;       /* BEGIN was issued */
    /* The open transaction: buffered writes to one table. */
    Table *pTxnTable;       /* holds a reference, or NULL */
    VEC(TableOp) txnOps;
    Arena txn;              /* values of txnOps */
    int64_t iLastInsertId;
    VEC(SqlWarning) warnings;
    SqlMeta meta;
    SqlVarList vars;        /* session variable overrides and @user vars */
};

/* exec.c: statements that touch tables. */
void sqlx_select(SqlSession *s, const SqlStmt *st, SqlResult *r);
void sqlx_explain(SqlSession *s, const SqlStmt *st, SqlResult *r);
void sqlx_insert(SqlSession *s, const SqlStmt *st, SqlResult *r);
void sqlx_update(SqlSession *s, const SqlStmt *st, SqlResult *r);
void sqlx_delete(SqlSession *s, const SqlStmt *st, SqlResult *r);
void sqlx_create_table(SqlSession *s, const SqlStmt *st, SqlResult *r);
/* CREATE TABLE's word forms, exceptions and stop words (wordforms.c):
** zOption "wordforms", "exceptions" or "stopwords"; the files that option
** names (absolute paths or patterns, separated by commas or spaces), or
** its _list, checked and appended to out as the table keeps them (split
** into words as the analyzer configuration sp says:
** analyzer_split_config). LP_OK, or an error naming the file (and its
** line) or the list's rule. */
int sqlx_rules_files(const char *zOption, const char *zPaths, const AnalyzerConfig *sp, StrBuf *out, LpError *err);
int sqlx_rules_list(const char *zOption, const char *zList, const AnalyzerConfig *sp, StrBuf *out, LpError *err);
void sqlx_alter_table(SqlSession *s, const SqlStmt *st, SqlResult *r);
/* The table's expand_keywords option (checked at CREATE TABLE) as
** FTS_EXPAND_* bits: the default of its MATCH queries and snippets. */
int sqlx_table_expand(const Schema *sc);
/* Parses a MATCH text for table t (fts_match_parse_opts with the flags its
** options call for: inline wildcards where it has min_infix_len) and
** flags (FTS_MATCH_*: the statement's), after the table's regexp_filter
** rules rewrote it (the tree then points into a copy in a). */
struct FtsNode;
int sqlx_match_parse(Arena *a, const Table *t, const char *z, size_t n, unsigned flags, struct FtsNode **ppRoot,
                     LpError *err);
/* The text of a query *pz[0..*pn) as table analyzer an reads it: its
** regexp_filter rules applied, the result copied into a (*pz, *pn then
** point there; unchanged when it has no rules or none matched). LP_OK, or
** analyzer_query_text's error. */
int sqlx_query_text(Arena *a, const Analyzer *an, const char **pz, size_t *pn, LpError *err);
/* OPTION fuzzy=1 (Manticore's fuzzy search): the MATCH text z[0..n) of
** table t, words or one phrase of words (an operator is an error), as the
** query of their likely spellings: each word the OR of its three nearest
** terms within maxEdits edits (CALL SUGGEST's, nearest and most frequent
** first), "(sometimes^50|something^50) (wrld^18.4|world^18.4)", each word's
** choices boosted as Manticore does, 50 / (k + 1)^1.44 for the k-th (at
** least 1; no boosts in a phrase, "(a|b) (c|d)"). A word with no such term
** is left out, or kept as written with bPreserve; with no word left, the
** text as it is. Into *pzOut, *pnOut (in a). LP_OK or an error. */
int sqlx_fuzzy_text(Arena *a, Table *t, const char *z, size_t n, int maxEdits, int bPreserve, const char **pzOut,
                    size_t *pnOut, LpError *err);
/* The same without regexp_filter, for a text it rewrote already (CALL
** KEYWORDS' words). */
int sqlx_match_parse_raw(Arena *a, const Table *t, const char *z, size_t n, unsigned flags,
                         struct FtsNode **ppRoot, LpError *err);

/* session.c: transactions. */
/* Copies what v points to (a string, a vector, a multi-value) into a, so
** that it outlives the row it was read from. LP_OK or LP_NOMEM. */
int sqlx_copy_value(Arena *a, Value *v);
/* Commits the open transaction (if any). LP_OK, or an error in err. */
int sqlx_commit(SqlSession *s, LpError *err);
void sqlx_rollback(SqlSession *s);
/* Applies ops to t now (autocommit) or buffers them in the transaction.
** Values are copied when buffered. Fills r (OK with affected rows, or an
** error). */
void sqlx_write(SqlSession *s, Table *t, const TableOp *aOp, size_t nOp, SqlResult *r,
                int bReportAutoId);
/* Is a transaction collecting writes? */
int sqlx_in_txn(const SqlSession *s);

/* vars.c: system and user variables. */
/* Reads variable zName (scope 0/1 session, 2 global, 3 user) into *pv,
** with the text in arena a. LP_NOTFOUND for an unknown system variable. */
int sqlx_var_get(SqlSession *s, const char *zName, int scope, Arena *a, Value *pv);
/* SET one variable; fills err on failure (unknown, read-only, bad value). */
int sqlx_var_set(SqlSession *s, const char *zName, int scope, Value v, LpError *err);
void sqlx_varlist_free(SqlVarList *l);
void sqlx_show_variables(SqlSession *s, const ShowStmt *sh, SqlResult *r);

/* show.c: SHOW statements other than VARIABLES. */
void sqlx_show(SqlSession *s, const SqlStmt *st, SqlResult *r);
/* Keeps (a copy of) the last query's MATCH text and table for SHOW META,
** or forgets them when zTable is NULL; sqlx_meta_free frees the buffers
** (the session's end). */
void sqlx_meta_match(SqlSession *s, const char *zTable, const char *zMatch, size_t nMatch,
                     int nExpansionLimit, unsigned matchFlags);
void sqlx_meta_free(SqlSession *s);
/* Keeps the plan text of the last SELECT for SHOW PLAN (z[0..n), copied),
** or forgets it (z NULL): the query ran without profiling. */
void sqlx_meta_plan(SqlSession *s, const char *z, size_t n);

/* call.c: CALL KEYWORDS and CALL SNIPPETS. */
void sqlx_call(SqlSession *s, const SqlStmt *st, SqlResult *r);

/* Helpers used across files. */
/* A new reference to table zName, or NULL with r set to the error: 1146
** when there is no such table, 1105 with the reason when it exists but
** could not be opened (damaged files). */
Table *sqlx_table(SqlSession *s, const char *zName, SqlResult *r);
void sqlx_error(SqlResult *r, int iErrno, const char *zFmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Reports err into r, setting iErrno when err->detail is 0. */
void sqlx_report(SqlResult *r, const LpError *err, int iErrnoDefault);
void sqlx_warn(SqlSession *s, int code, const char *zFmt, ...)
    __attribute__((format(printf, 3, 4)));
/* SQL LIKE with % and _ (case-insensitive, as MySQL's default collation). */
int sqlx_like(const char *zPat, const char *z);
SqlColType sqlx_coltype(ColType t);

#endif /* LP_SQL_INT_H */
