/*
** ast.h — the syntax tree the SQL parser produces.
**
** Contract. sql_parse() (parser.h) turns the text of one statement into a
** SqlStmt whose every node, string and array is allocated in the caller's
** Arena; the tree is read-only afterwards and dies with the arena. Names
** (tables, columns, options, functions, variables) are stored lower-cased,
** as loupe's identifiers are case-insensitive (as Manticore's are); string
** literals are stored unescaped, with their byte length (they may contain
** NUL bytes). Every node carries the byte offset of its first character in
** the statement text (`pos`) and the length of its source text (`len`), so
** the executor can point at the exact place an error refers to and name a
** result column after the expression's text, as MySQL does.
**
** The tree is syntax only: whether a table or column exists, or a value
** fits a type, is decided later by the executor (sql/exec.c).
*/
#ifndef LP_SQL_AST_H
#define LP_SQL_AST_H

#include <stddef.h>
#include <stdint.h>

/* ------------------------------------------------------------------ */
/* Expressions                                                         */

typedef enum ExprKind {
    EXPR_NULL,          /* NULL */
    EXPR_INT,           /* integer literal: u.i (a leading '-' is folded in) */
    EXPR_FLOAT,         /* float literal: u.f (1.5, 1e-3, .5; '-' folded in) */
    EXPR_STRING,        /* 'text' or "text": u.s */
    EXPR_COLUMN,        /* column reference: u.zName (lower-cased) */
    EXPR_SYSVAR,        /* @@name, @@session.name, @@global.name: u.var */
    EXPR_USERVAR,       /* @name: u.var.zName */
    EXPR_STAR,          /* '*' as the sole argument of COUNT(*) */
    EXPR_UNARY,         /* u.unary: -x, +x, NOT x, !x */
    EXPR_BINARY,        /* u.binary: arithmetic, comparison, AND, OR */
    EXPR_IN,            /* u.in: x [NOT] IN (a, b, ...) */
    EXPR_BETWEEN,       /* u.between: x [NOT] BETWEEN lo AND hi */
    EXPR_ISNULL,        /* u.isnull: x IS [NOT] NULL */
    EXPR_FUNC,          /* u.func: name(args) — COUNT(*), DATABASE(), ... */
    EXPR_LIST,          /* u.list: parenthesised list of 2+ expressions, or
                        ** of 0+ in a VALUES row / SET value / function
                        ** argument, e.g. a vector literal (0.1, 0.2, 0.3),
                        ** a multi-value (1, 2, 3) or the empty one () */
    EXPR_MAP,           /* u.map: {name=value, ...}, e.g. knn's options */
} ExprKind;

typedef enum ExprOp {
    OP_NONE = 0,
    /* unary */
    OP_NEG, OP_PLUS, OP_NOT,
    /* arithmetic */
    OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MOD, OP_IDIV, /* / and DIV */
    /* comparison: =, != or <>, <, <=, >, >= */
    OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE,
    /* logic */
    OP_AND, OP_OR,
    /* bitwise, on integers: & and | */
    OP_BITAND, OP_BITOR,
} ExprOp;

typedef struct Expr Expr;
typedef struct SqlMapItem SqlMapItem;

/* One step of a JSON path after a column name: .key, ['key'] or [N]. */
typedef struct ExprPathStep {
    const char *zKey;           /* the key (case kept), or NULL: ... */
    size_t nKey;
    int64_t iIndex;             /* ... the array index (>= 0) */
} ExprPathStep;

struct Expr {
    ExprKind kind;
    int pos;                    /* byte offset of the first character */
    int len;                    /* length of the source text */
    ExprPathStep *aPath;        /* EXPR_COLUMN: a JSON path after the name */
    int nPath;
    union {
        int64_t i;              /* EXPR_INT */
        double f;               /* EXPR_FLOAT */
        struct {
            const char *z;      /* unescaped bytes, NUL-terminated */
            size_t n;           /* length (may contain NULs) */
        } s;                    /* EXPR_STRING */
        const char *zName;      /* EXPR_COLUMN */
        struct {
            const char *zName;  /* lower-cased, without @@ and scope */
            int scope;          /* 0 unspecified, 1 SESSION/LOCAL, 2 GLOBAL */
        } var;                  /* EXPR_SYSVAR, EXPR_USERVAR */
        struct {
            ExprOp op;
            Expr *pArg;
        } unary;
        struct {
            ExprOp op;
            Expr *pLeft, *pRight;
        } binary;
        struct {
            Expr *pLeft;
            Expr **aList;       /* the parenthesised values */
            int nList;
            int bNot;           /* NOT IN */
        } in;
        struct {
            Expr *pLeft, *pLow, *pHigh;
            int bNot;           /* NOT BETWEEN */
        } between;
        struct {
            Expr *pArg;
            int bNot;           /* IS NOT NULL */
        } isnull;
        struct {
            const char *zName;  /* lower-cased function name */
            Expr **aArg;        /* arguments; COUNT(*) has one EXPR_STAR */
            int nArg;
            int bDistinct;      /* COUNT(DISTINCT x) */
            int bFor;           /* ANY(cond FOR x IN arr): aArg is cond, x (an
                                ** EXPR_COLUMN: the element's name), arr */
            const char *zAlias; /* MATCH(...) AS name, knn(...) AS name (hybrid
                                ** search's fusion_weights), or NULL */
            int aliasPos;       /* its offset */
        } func;
        struct {
            Expr **aItem;
            int nItem;
        } list;
        struct {
            SqlMapItem *aItem;
            int nItem;
        } map;
    } u;
};

/* name=value inside {…} of EXPR_MAP, inside OPTION name=(…), and in
** CREATE TABLE option lists. */
struct SqlMapItem {
    const char *zName;          /* lower-cased */
    int pos;                    /* offset of the name */
    Expr *pValue;               /* literal, identifier (EXPR_COLUMN), list, map */
    ExprPathStep *aPath;        /* UPDATE SET j.a.b = ...: the JSON path after */
    int nPath;                  /* the name (else none) */
};

/* ------------------------------------------------------------------ */
/* Statements                                                          */

typedef enum StmtKind {
    STMT_SELECT,
    STMT_INSERT,                /* INSERT and REPLACE (u.insert.bReplace) */
    STMT_DELETE,
    STMT_UPDATE,
    STMT_CREATE_TABLE,
    STMT_DROP_TABLE,
    STMT_TRUNCATE,              /* TRUNCATE TABLE t */
    STMT_FLUSH,                 /* FLUSH TABLE t, FLUSH RAMCHUNK t */
    STMT_OPTIMIZE,              /* OPTIMIZE TABLE t [OPTION cutoff=N, sync=1] */
    STMT_ALTER_TABLE,           /* ALTER TABLE t ADD | DROP | MODIFY COLUMN, REBUILD EMBEDDINGS */
    STMT_SHOW,                  /* every SHOW …, and DESCRIBE / DESC */
    STMT_SET,                   /* SET …, SET NAMES …, SET CHARACTER SET … */
    STMT_BEGIN,                 /* BEGIN, START TRANSACTION */
    STMT_COMMIT,
    STMT_ROLLBACK,
    STMT_USE,                   /* USE db */
    STMT_EXPLAIN,               /* EXPLAIN SELECT …: u.select */
    STMT_CALL,                  /* CALL name(arg [AS name], ...): u.call */
} StmtKind;

/* CALL KEYWORDS(...), CALL SNIPPETS(...): arguments as written, each with
** the name of an `AS name` after it (NULL when none). */
typedef struct CallStmt {
    const char *zName;          /* lower-cased procedure name */
    int namePos;
    Expr **aArg;
    const char **azAs;          /* lower-cased */
    int *aAsPos;
    int nArg;
} CallStmt;

typedef struct SelectItem {
    Expr *pExpr;                /* NULL for a bare '*' */
    const char *zAlias;         /* AS alias, as written (case kept), or NULL */
} SelectItem;

typedef struct OrderItem {
    Expr *pExpr;
    int bDesc;                  /* DESC */
} OrderItem;

/* FACET expr [AS alias] {, expr [AS alias]} [BY expr {, expr}] [DISTINCT
** column] [ORDER BY ...] [LIMIT [off,] n]: one more result set, the rows
** grouped by the expressions (or the BY list) with their COUNT(*), and
** COUNT(DISTINCT column) before it (Manticore's). */
typedef struct FacetClause {
    SelectItem *aItem;          /* the faceted expressions, at least one */
    int nItem;
    Expr **aBy;                 /* BY: the keys, or NULL (the expressions) */
    int nBy;
    Expr *pDistinct;            /* DISTINCT column, or NULL */
    OrderItem *aOrder;
    int nOrder;
    int64_t iLimit;             /* -1 when absent */
    int64_t iOffset;
} FacetClause;

typedef struct SelectStmt {
    SelectItem *aItem;          /* select list, in order; '*' is an item */
    int nItem;
    const char *zTable;         /* FROM table (lower-cased), NULL when absent */
    int tablePos;               /* offset of the table name */
    Expr *pWhere;               /* or NULL */
    Expr **aGroupBy;            /* GROUP BY expressions */
    int nGroupBy;
    int64_t nGroupRows;         /* GROUP N BY: rows shown per group (1) */
    OrderItem *aWithin;         /* WITHIN GROUP ORDER BY: which rows a group
                                ** shows first, or NULL */
    int nWithin;
    Expr *pHaving;              /* HAVING condition over the groups, or NULL */
    OrderItem *aOrder;          /* ORDER BY, or NULL */
    int nOrder;
    int64_t iLimit;             /* LIMIT n; -1 when absent */
    int64_t iOffset;            /* LIMIT off, n / LIMIT n OFFSET off; 0 default */
    SqlMapItem *aOption;        /* OPTION a=1, b=(x=1, y=2), c='s' */
    int nOption;
    FacetClause *aFacet;        /* FACET clauses, at the end, or NULL */
    int nFacet;
} SelectStmt;

typedef struct InsertStmt {
    int bReplace;               /* REPLACE INTO */
    const char *zTable;
    int tablePos;
    const char **azCol;         /* column list, or NULL for "all columns" */
    int *aColPos;               /* offset of each column name */
    int nCol;
    Expr ***aaRow;              /* aaRow[r][c]: the VALUES rows */
    int *anRowVal;              /* number of values in each row */
    int *aRowPos;               /* offset of each row's '(' */
    int nRow;
} InsertStmt;

typedef struct DeleteStmt {
    const char *zTable;
    int tablePos;
    Expr *pWhere;               /* or NULL */
} DeleteStmt;

typedef struct UpdateStmt {
    const char *zTable;
    int tablePos;
    SqlMapItem *aSet;           /* SET col = expr, ... (col may have a JSON path) */
    int nSet;
    Expr *pWhere;               /* or NULL */
    SqlMapItem *aOption;        /* OPTION …, as in SELECT */
    int nOption;
} UpdateStmt;

typedef struct OptimizeStmt {
    const char *zTable;
    int tablePos;
    SqlMapItem *aOption;        /* OPTION cutoff=N, sync=0|1 */
    int nOption;
} OptimizeStmt;

/* One column in CREATE TABLE: name, type word, then any mix of bare flags
** (indexed, stored, attribute, ...) and key='value' options (knn_type='hnsw',
** knn_dims='384', hnsw_similarity='l2', model_name=..., from=..., engine=...). */
typedef struct ColumnDef {
    const char *zName;          /* lower-cased */
    int pos;
    const char *zType;          /* lower-cased type word as written: "int", "integer", "float_vector" */
    int typePos;
    const char **azFlag;        /* lower-cased bare words after the type */
    int *aFlagPos;
    int nFlag;
    SqlMapItem *aOpt;           /* key=value options after the type */
    int nOpt;
} ColumnDef;

typedef struct CreateTableStmt {
    const char *zTable;
    int tablePos;
    int bIfNotExists;
    ColumnDef *aCol;
    int nCol;
    SqlMapItem *aOpt;           /* table options after ')': key='value' ... */
    int nOpt;
} CreateTableStmt;

typedef enum AlterKind {
    ALTER_ADD_COLUMN,           /* ADD [COLUMN] coldef */
    ALTER_DROP_COLUMN,          /* DROP [COLUMN] name */
    ALTER_MODIFY_COLUMN,        /* MODIFY [COLUMN] coldef */
    ALTER_REBUILD_EMBEDDINGS,   /* REBUILD EMBEDDINGS name */
    ALTER_SET_OPTIONS,          /* name = 'value' [, ...]: table options */
} AlterKind;

typedef struct AlterTableStmt {
    const char *zTable;
    int tablePos;
    AlterKind kind;
    ColumnDef col;              /* ADD, MODIFY */
    const char *zColumn;        /* DROP, REBUILD: lower-cased */
    int colPos;
    SqlMapItem *aOpt;           /* SET_OPTIONS: the options, as CREATE TABLE's */
    int nOpt;
} AlterTableStmt;

typedef struct DropTableStmt {
    const char *zTable;
    int tablePos;
    int bIfExists;
} DropTableStmt;

typedef enum ShowKind {
    SHOW_TABLES,                /* SHOW TABLES [LIKE 'pat'] */
    SHOW_CREATE_TABLE,          /* SHOW CREATE TABLE t */
    SHOW_DESCRIBE,              /* DESCRIBE t, DESC t, SHOW [FULL] COLUMNS FROM t */
    SHOW_VARIABLES,             /* SHOW [GLOBAL|SESSION] VARIABLES [LIKE 'pat' | WHERE ...] */
    SHOW_STATUS,                /* SHOW [GLOBAL|SESSION] STATUS [LIKE 'pat'] */
    SHOW_DATABASES,             /* SHOW DATABASES */
    SHOW_META,                  /* SHOW META [LIKE 'pat'] */
    SHOW_PLAN,                  /* SHOW PLAN (the last SELECT's, with profiling on) */
    SHOW_PROFILE,               /* SHOW PROFILE (its stages' times) */
    SHOW_WARNINGS,              /* SHOW WARNINGS */
    SHOW_COLLATION,             /* SHOW COLLATION [LIKE] */
    SHOW_CHARSET,               /* SHOW CHARACTER SET / SHOW CHARSET [LIKE] */
    SHOW_ENGINES,               /* SHOW ENGINES */
    SHOW_TABLE_STATUS,          /* SHOW TABLE t STATUS */
    SHOW_TABLE_SETTINGS,        /* SHOW TABLE t SETTINGS */
} ShowKind;

typedef struct ShowStmt {
    ShowKind kind;
    const char *zTable;         /* table, for CREATE TABLE / DESCRIBE / TABLE STATUS */
    int tablePos;
    const char *zLike;          /* LIKE pattern (unescaped), or NULL */
    int scope;                  /* 0, 1 SESSION, 2 GLOBAL */
    int bFull;                  /* SHOW FULL … */
} ShowStmt;

/* SET a = 1, @@session.b = 'x', NAMES 'utf8mb4' [COLLATE 'c'],
** CHARACTER SET x, TRANSACTION …: each assignment is one SetItem. SET NAMES
** becomes zName "names" with the charset as a string value; SET CHARACTER SET
** becomes "character_set"; SET [SESSION] TRANSACTION … becomes "transaction"
** with the rest of the text as a string. */
typedef struct SetItem {
    const char *zName;          /* lower-cased, without @@ / scope */
    int pos;
    int scope;                  /* 0, 1 SESSION, 2 GLOBAL; 3 = user variable @x */
    Expr *pValue;               /* literal or identifier (EXPR_COLUMN: SET x = ON) */
} SetItem;

typedef struct SetStmt {
    SetItem *aItem;
    int nItem;
} SetStmt;

typedef struct SqlStmt {
    StmtKind kind;
    const char *zSql;           /* the statement text (not owned) */
    size_t nSql;
    union {
        SelectStmt select;
        InsertStmt insert;
        DeleteStmt del;
        UpdateStmt update;
        CreateTableStmt create;
        DropTableStmt drop;
        AlterTableStmt alter;
        DropTableStmt truncate;     /* bIfExists unused */
        DropTableStmt flush;        /* bIfExists unused */
        OptimizeStmt optimize;
        CallStmt call;
        ShowStmt show;
        SetStmt set;
        struct { const char *zName; } use;
    } u;
} SqlStmt;

#endif /* LP_SQL_AST_H */
