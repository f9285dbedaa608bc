/*
** test_sql_parser.c — unit tests for src/sql/parser.c: every statement
** form, operator precedence (through an S-expression dump of the tree),
** literal edge cases, source offsets, and the exact text of syntax errors.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sql/parser.h"
#include "util/strbuf.h"

/* ------------------------------------------------------------- helpers */

static Arena gArena; /* reset by each parse */

static SqlStmt *parse_n(const char *z, size_t n) {
    SqlStmt *s = NULL;
    LpError err;
    lp_err_clear(&err);
    arena_reset(&gArena);
    int rc = sql_parse(&gArena, z, n, &s, &err);
    if (rc != LP_OK) fail_msg("parse of \"%s\" failed: %s", z, err.zMsg);
    assert_non_null(s);
    assert_ptr_equal(s->zSql, z);
    assert_int_equal(s->nSql, n);
    return s;
}

static SqlStmt *parse(const char *z) { return parse_n(z, strlen(z)); }

/* Parses z, which must fail, and returns the error. */
static LpError parse_fail_n(const char *z, size_t n) {
    SqlStmt *s = (SqlStmt *)1;
    LpError err;
    lp_err_clear(&err);
    arena_reset(&gArena);
    int rc = sql_parse(&gArena, z, n, &s, &err);
    if (rc == LP_OK) fail_msg("parse of \"%s\" succeeded", z);
    assert_int_equal(rc, err.code);
    assert_null(s);
    return err;
}

/* Asserts the syntax error of z: its message and byte position. */
static void check_error(const char *z, int pos, const char *zMsg) {
    LpError err = parse_fail_n(z, strlen(z));
    assert_int_equal(err.code, LP_BADINPUT);
    assert_int_equal(err.detail, SQL_ER_PARSE_ERROR);
    if (strcmp(err.zMsg, zMsg) != 0) fail_msg("%s:\n got  %s\n want %s", z, err.zMsg, zMsg);
    if (err.pos != pos) fail_msg("%s: pos %d, want %d", z, (int)err.pos, pos);
}

static void dump(StrBuf *sb, const Expr *e);

static void dump_list(StrBuf *sb, Expr *const *a, int n) {
    for (int i = 0; i < n; i++) {
        strbuf_appendc(sb, ' ');
        dump(sb, a[i]);
    }
}

static const char *op_name(ExprOp op) {
    static const char *const az[] = {
        [OP_NEG] = "neg", [OP_PLUS] = "plus", [OP_NOT] = "not", [OP_ADD] = "+",
        [OP_SUB] = "-",   [OP_MUL] = "*",     [OP_DIV] = "/",   [OP_MOD] = "%",
        [OP_IDIV] = "div", [OP_EQ] = "=",     [OP_NE] = "!=",   [OP_LT] = "<",
        [OP_LE] = "<=",   [OP_GT] = ">",      [OP_GE] = ">=",   [OP_AND] = "and",
        [OP_OR] = "or",
    };
    return az[op];
}

/* An S-expression of the tree: (op left right), func(args), [list], {map}. */
static void dump(StrBuf *sb, const Expr *e) {
    switch (e->kind) {
    case EXPR_NULL: strbuf_appendz(sb, "NULL"); break;
    case EXPR_INT: strbuf_appendf(sb, "%lld", (long long)e->u.i); break;
    case EXPR_FLOAT: strbuf_appendf(sb, "%gf", e->u.f); break;
    case EXPR_STRING:
        strbuf_appendc(sb, '\'');
        strbuf_append(sb, e->u.s.z, e->u.s.n);
        strbuf_appendc(sb, '\'');
        break;
    case EXPR_COLUMN:
        strbuf_appendz(sb, e->u.zName);
        for (int i = 0; i < e->nPath; i++) {
            if (e->aPath[i].zKey) strbuf_appendf(sb, ".%s", e->aPath[i].zKey);
            else strbuf_appendf(sb, "[%lld]", (long long)e->aPath[i].iIndex);
        }
        break;
    case EXPR_SYSVAR:
        strbuf_appendf(sb, "@@%s%s", e->u.var.scope == 2 ? "global." : e->u.var.scope == 1 ? "session." : "",
                       e->u.var.zName);
        break;
    case EXPR_USERVAR: strbuf_appendf(sb, "@%s", e->u.var.zName); break;
    case EXPR_STAR: strbuf_appendc(sb, '*'); break;
    case EXPR_UNARY:
        strbuf_appendf(sb, "(%s ", op_name(e->u.unary.op));
        dump(sb, e->u.unary.pArg);
        strbuf_appendc(sb, ')');
        break;
    case EXPR_BINARY:
        strbuf_appendf(sb, "(%s ", op_name(e->u.binary.op));
        dump(sb, e->u.binary.pLeft);
        strbuf_appendc(sb, ' ');
        dump(sb, e->u.binary.pRight);
        strbuf_appendc(sb, ')');
        break;
    case EXPR_IN:
        strbuf_appendz(sb, e->u.in.bNot ? "(notin " : "(in ");
        dump(sb, e->u.in.pLeft);
        dump_list(sb, e->u.in.aList, e->u.in.nList);
        strbuf_appendc(sb, ')');
        break;
    case EXPR_BETWEEN:
        strbuf_appendz(sb, e->u.between.bNot ? "(notbetween " : "(between ");
        dump(sb, e->u.between.pLeft);
        strbuf_appendc(sb, ' ');
        dump(sb, e->u.between.pLow);
        strbuf_appendc(sb, ' ');
        dump(sb, e->u.between.pHigh);
        strbuf_appendc(sb, ')');
        break;
    case EXPR_ISNULL:
        strbuf_appendz(sb, e->u.isnull.bNot ? "(isnotnull " : "(isnull ");
        dump(sb, e->u.isnull.pArg);
        strbuf_appendc(sb, ')');
        break;
    case EXPR_FUNC:
        strbuf_appendf(sb, "%s(%s", e->u.func.zName, e->u.func.bDistinct ? "distinct" : "");
        dump_list(sb, e->u.func.aArg, e->u.func.nArg);
        strbuf_appendc(sb, ')');
        if (e->u.func.zAlias) strbuf_appendf(sb, " as %s", e->u.func.zAlias);
        break;
    case EXPR_LIST:
        strbuf_appendc(sb, '[');
        dump_list(sb, e->u.list.aItem, e->u.list.nItem);
        strbuf_appendc(sb, ']');
        break;
    case EXPR_MAP:
        strbuf_appendc(sb, '{');
        for (int i = 0; i < e->u.map.nItem; i++) {
            strbuf_appendf(sb, " %s=", e->u.map.aItem[i].zName);
            dump(sb, e->u.map.aItem[i].pValue);
        }
        strbuf_appendc(sb, '}');
        break;
    }
}

static char gzDump[4096];

static const char *dumps(const Expr *e) {
    StrBuf sb = {0};
    dump(&sb, e);
    assert_false(sb.oom);
    snprintf(gzDump, sizeof(gzDump), "%s", sb.z);
    strbuf_free(&sb);
    return gzDump;
}

/* The source text an expression's pos/len cover. */
static char gzText[1024];
static const char *src_text(const SqlStmt *s, const Expr *e) {
    assert_true(e->pos >= 0 && e->len >= 0 && (size_t)(e->pos + e->len) <= s->nSql);
    snprintf(gzText, sizeof(gzText), "%.*s", e->len, s->zSql + e->pos);
    return gzText;
}

/* The WHERE of "SELECT * FROM t WHERE <zExpr>", dumped. */
static const char *where(const char *zExpr) {
    static char zSql[8192];
    snprintf(zSql, sizeof(zSql), "SELECT * FROM t WHERE %s", zExpr);
    SqlStmt *s = parse(zSql);
    assert_int_equal(s->kind, STMT_SELECT);
    assert_non_null(s->u.select.pWhere);
    return dumps(s->u.select.pWhere);
}

/* The single select item of "SELECT <zExpr>", dumped. */
static const char *item(const char *zExpr) {
    static char zSql[8192];
    snprintf(zSql, sizeof(zSql), "SELECT %s", zExpr);
    SqlStmt *s = parse(zSql);
    assert_int_equal(s->u.select.nItem, 1);
    return dumps(s->u.select.aItem[0].pExpr);
}

static char *repeat(const char *zUnit, int n, const char *zMid, const char *zTail) {
    size_t nUnit = strlen(zUnit), nMid = strlen(zMid);
    char *z = malloc(2 * nUnit * (size_t)n + nMid + strlen(zTail) + 1);
    assert_non_null(z);
    char *o = z;
    for (int i = 0; i < n; i++, o += nUnit) memcpy(o, zUnit, nUnit);
    memcpy(o, zMid, nMid);
    o += nMid;
    for (int i = 0; i < n; i++) o += sprintf(o, "%s", zTail);
    *o = 0;
    return z;
}

/* ------------------------------------------------------------- SELECT */

static void test_select_point(void **state) {
    (void)state;
    SqlStmt *s = parse("SELECT * FROM t WHERE id = 123");
    assert_int_equal(s->kind, STMT_SELECT);
    SelectStmt *q = &s->u.select;
    assert_int_equal(q->nItem, 1);
    assert_null(q->aItem[0].pExpr);
    assert_null(q->aItem[0].zAlias);
    assert_string_equal(q->zTable, "t");
    assert_int_equal(q->tablePos, 14);
    assert_string_equal(dumps(q->pWhere), "(= id 123)");
    assert_int_equal(q->iLimit, -1);
    assert_int_equal(q->iOffset, 0);
    assert_int_equal(q->nGroupBy, 0);
    assert_int_equal(q->nOrder, 0);
    assert_int_equal(q->nOption, 0);
}

static void test_select_items(void **state) {
    (void)state;
    SqlStmt *s = parse("select ID, Title AS T, price p, COUNT(*) AS \"My Cnt\", `We``ird`, *, "
                       "weight() `W` FROM Products");
    SelectStmt *q = &s->u.select;
    assert_int_equal(q->nItem, 7);
    assert_string_equal(q->zTable, "products");
    assert_string_equal(dumps(q->aItem[0].pExpr), "id");
    assert_null(q->aItem[0].zAlias);
    assert_string_equal(dumps(q->aItem[1].pExpr), "title");
    assert_string_equal(q->aItem[1].zAlias, "T");
    assert_string_equal(q->aItem[2].zAlias, "p");
    assert_string_equal(dumps(q->aItem[3].pExpr), "count( *)");
    assert_string_equal(q->aItem[3].zAlias, "My Cnt");
    assert_string_equal(dumps(q->aItem[4].pExpr), "we`ird");
    assert_null(q->aItem[5].pExpr);
    assert_string_equal(dumps(q->aItem[6].pExpr), "weight()");
    assert_string_equal(q->aItem[6].zAlias, "W");
    /* Result columns are named after the source text. */
    assert_string_equal(src_text(s, q->aItem[3].pExpr), "COUNT(*)");
}

static void test_select_clauses(void **state) {
    (void)state;
    SqlStmt *s = parse("SELECT a, b FROM db.t WHERE x > 1 GROUP BY a, b ORDER BY a DESC, b ASC, c "
                       "LIMIT 10, 20 OPTION ranker=bm25, field_weights=(title=10, Body=1.5), "
                       "comment='x', max_matches=-1, ranker2=expr('sum(lcs)'), e=()");
    SelectStmt *q = &s->u.select;
    assert_string_equal(q->zTable, "t");
    assert_int_equal(q->tablePos, 20);
    assert_string_equal(dumps(q->pWhere), "(> x 1)");
    assert_int_equal(q->nGroupBy, 2);
    assert_string_equal(dumps(q->aGroupBy[1]), "b");
    assert_int_equal(q->nOrder, 3);
    assert_string_equal(dumps(q->aOrder[0].pExpr), "a");
    assert_int_equal(q->aOrder[0].bDesc, 1);
    assert_int_equal(q->aOrder[1].bDesc, 0);
    assert_int_equal(q->aOrder[2].bDesc, 0);
    assert_int_equal(q->iOffset, 10);
    assert_int_equal(q->iLimit, 20);
    assert_int_equal(q->nOption, 6);
    assert_string_equal(q->aOption[0].zName, "ranker");
    assert_string_equal(dumps(q->aOption[0].pValue), "bm25");
    assert_string_equal(q->aOption[1].zName, "field_weights");
    assert_string_equal(dumps(q->aOption[1].pValue), "{ title=10 body=1.5f}");
    assert_string_equal(dumps(q->aOption[2].pValue), "'x'");
    assert_string_equal(dumps(q->aOption[3].pValue), "-1");
    assert_string_equal(dumps(q->aOption[4].pValue), "expr( 'sum(lcs)')");
    assert_string_equal(dumps(q->aOption[5].pValue), "{}");
    assert_int_equal(q->aOption[1].pos, (int)(strstr(s->zSql, "field_weights") - s->zSql));

    /* JSON paths: the name lower-cased, the keys as written */
    q = &parse("SELECT J.Color.Shade, j['a b'][2] FROM t")->u.select;
    assert_string_equal(q->aItem[0].pExpr->u.zName, "j");
    assert_int_equal(q->aItem[0].pExpr->nPath, 2);
    assert_string_equal(q->aItem[0].pExpr->aPath[0].zKey, "Color");
    assert_string_equal(q->aItem[0].pExpr->aPath[1].zKey, "Shade");
    assert_int_equal(q->aItem[1].pExpr->nPath, 2);
    assert_string_equal(q->aItem[1].pExpr->aPath[0].zKey, "a b");
    assert_null(q->aItem[1].pExpr->aPath[1].zKey);
    assert_int_equal(q->aItem[1].pExpr->aPath[1].iIndex, 2);

    /* GROUP N BY, and WITHIN GROUP ORDER BY before or after HAVING */
    q = &parse("SELECT a FROM t GROUP 3 BY a HAVING c > 1 WITHIN GROUP ORDER BY b DESC, d ORDER BY a")->u.select;
    assert_int_equal(q->nGroupRows, 3);
    assert_int_equal(q->nWithin, 2);
    assert_string_equal(dumps(q->aWithin[0].pExpr), "b");
    assert_int_equal(q->aWithin[0].bDesc, 1);
    assert_int_equal(q->aWithin[1].bDesc, 0);
    assert_string_equal(dumps(q->pHaving), "(> c 1)");
    assert_int_equal(q->nOrder, 1);
    q = &parse("SELECT a FROM t GROUP BY a WITHIN GROUP ORDER BY b HAVING c > 1")->u.select;
    assert_int_equal(q->nGroupRows, 1);
    assert_int_equal(q->nWithin, 1);
    assert_true(q->pHaving != NULL);

    /* FACET lists, BY, DISTINCT, ORDER BY and LIMIT; several FACETs */
    q = &parse("SELECT id FROM t OPTION a=1 FACET x AS u, y + 1 BY z, w DISTINCT c ORDER BY FACET() DESC "
               "LIMIT 2, 3 FACET v")->u.select;
    assert_int_equal(q->nFacet, 2);
    assert_int_equal(q->aFacet[0].nItem, 2);
    assert_string_equal(q->aFacet[0].aItem[0].zAlias, "u");
    assert_string_equal(dumps(q->aFacet[0].aItem[1].pExpr), "(+ y 1)");
    assert_int_equal(q->aFacet[0].nBy, 2);
    assert_string_equal(dumps(q->aFacet[0].aBy[1]), "w");
    assert_string_equal(dumps(q->aFacet[0].pDistinct), "c");
    assert_int_equal(q->aFacet[0].nOrder, 1);
    assert_int_equal(q->aFacet[0].iOffset, 2);
    assert_int_equal(q->aFacet[0].iLimit, 3);
    assert_int_equal(q->aFacet[1].nItem, 1);
    assert_true(q->aFacet[1].aBy == NULL && q->aFacet[1].pDistinct == NULL && q->aFacet[1].iLimit == -1);

    q = &parse("SELECT * FROM t LIMIT 5")->u.select;
    assert_int_equal(q->iLimit, 5);
    assert_int_equal(q->iOffset, 0);
    q = &parse("SELECT * FROM t LIMIT 5 OFFSET 10")->u.select;
    assert_int_equal(q->iLimit, 5);
    assert_int_equal(q->iOffset, 10);
    q = &parse("SELECT * FROM t LIMIT 0,9223372036854775807")->u.select;
    assert_int_equal(q->iLimit, INT64_MAX);
    assert_int_equal(q->iOffset, 0);

    /* What clients send on connect. */
    q = &parse("select @@version_comment limit 1")->u.select;
    assert_null(q->zTable);
    assert_string_equal(dumps(q->aItem[0].pExpr), "@@version_comment");
    assert_int_equal(q->iLimit, 1);
    q = &parse("SELECT DATABASE(), USER(), @@session.auto_increment_increment AS "
               "auto_increment_increment")->u.select;
    assert_int_equal(q->nItem, 3);
    assert_string_equal(dumps(q->aItem[2].pExpr), "@@session.auto_increment_increment");
    assert_string_equal(q->aItem[2].zAlias, "auto_increment_increment");
}

static void test_keywords_as_names(void **state) {
    (void)state;
    SqlStmt *s = parse("SELECT status, type, text, count, key, value, `from`, Names x FROM status "
                       "WHERE status = 1 AND count(*) > 0 ORDER BY value DESC");
    SelectStmt *q = &s->u.select;
    assert_int_equal(q->nItem, 8);
    assert_string_equal(dumps(q->aItem[0].pExpr), "status");
    assert_string_equal(dumps(q->aItem[3].pExpr), "count");
    assert_string_equal(dumps(q->aItem[6].pExpr), "from");
    assert_string_equal(dumps(q->aItem[7].pExpr), "names");
    assert_string_equal(q->aItem[7].zAlias, "x");
    assert_string_equal(q->zTable, "status");
    assert_string_equal(dumps(q->pWhere), "(and (= status 1) (> count( *) 0))");
    /* An alias without AS may be a non-reserved keyword... */
    q = &parse("SELECT 1 status")->u.select;
    assert_string_equal(q->aItem[0].zAlias, "status");
    /* ...but a reserved word ends the item. */
    q = &parse("SELECT a LIMIT 1")->u.select;
    assert_null(q->aItem[0].zAlias);
    assert_int_equal(q->iLimit, 1);
    /* Case does not matter for keywords. */
    q = &parse("sElEcT * fRoM T wHeRe Id = 1 OrDeR bY iD dEsC lImIt 1")->u.select;
    assert_string_equal(q->zTable, "t");
    assert_int_equal(q->aOrder[0].bDesc, 1);
}

/* ------------------------------------------------------- expressions */

static void test_precedence(void **state) {
    (void)state;
    static const struct {
        const char *zIn, *zOut;
    } aCase[] = {
        {"a OR b AND c", "(or a (and b c))"},
        {"a AND b OR c", "(or (and a b) c)"},
        {"a || b && c", "(or a (and b c))"},
        {"a OR b OR c", "(or (or a b) c)"},
        {"NOT a = 1", "(not (= a 1))"},
        {"NOT a AND b", "(and (not a) b)"},
        {"NOT NOT a", "(not (not a))"},
        {"!a = 1", "(= (not a) 1)"},
        {"a = 1 AND b <> 2 OR c != 3", "(or (and (= a 1) (!= b 2)) (!= c 3))"},
        {"a == 1", "(= a 1)"},
        {"a < 1 OR a <= 2 OR a > 3 OR a >= 4", "(or (or (or (< a 1) (<= a 2)) (> a 3)) (>= a 4))"},
        {"a = b = c", "(= (= a b) c)"},
        {"a + 1 = b * 2", "(= (+ a 1) (* b 2))"},
        {"1 + 2 * 3 - 4 / 5", "(- (+ 1 (* 2 3)) (/ 4 5))"},
        {"2 - 3 - 4", "(- (- 2 3) 4)"},
        {"a % 2 = 0 AND b DIV 3 MOD 4 = 1", "(and (= (% a 2) 0) (= (% (div b 3) 4) 1))"},
        {"-a * b", "(* (neg a) b)"},
        {"- - a", "(neg (neg a))"},
        {"+a", "(plus a)"},
        {"a - -1", "(- a -1)"},
        {"a-1", "(- a 1)"},
        {"5--3", "(- 5 -3)"},
        {"(a OR b) AND c", "(and (or a b) c)"},
        {"a IN (1, 2, 3)", "(in a 1 2 3)"},
        {"a IN (1)", "(in a 1)"},
        {"a NOT IN ('x', 'y')", "(notin a 'x' 'y')"},
        {"NOT a IN (1)", "(not (in a 1))"},
        {"a BETWEEN 1 AND 2 AND b", "(and (between a 1 2) b)"},
        {"a NOT BETWEEN 1 + 1 AND 2 * 3", "(notbetween a (+ 1 1) (* 2 3))"},
        {"a IS NULL OR b IS NOT NULL", "(or (isnull a) (isnotnull b))"},
        {"a + 1 IS NULL", "(isnull (+ a 1))"},
        {"a = TRUE OR b = false OR c = NULL", "(or (or (= a 1) (= b 0)) (= c NULL))"},
        {"MATCH('hello world') AND id > 5", "(and match( 'hello world') (> id 5))"},
        {"MATCH('a') AS Text AND knn(v, 5, (1, 2)) AS dense", "(and match( 'a') as text knn( v 5 [ 1 2]) as dense)"},
        {"IN(a, 1, 2)", "in( a 1 2)"},
        {"j.a.b = 1 AND `T`.`Col` = 2", "(and (= j.a.b 1) (= t.Col 2))"},
        {"@x = @@global.y", "(= @x @@global.y)"},
    };
    for (size_t i = 0; i < sizeof(aCase) / sizeof(aCase[0]); i++) {
        const char *zGot = where(aCase[i].zIn);
        if (strcmp(zGot, aCase[i].zOut) != 0) {
            fail_msg("%s: got %s, want %s", aCase[i].zIn, zGot, aCase[i].zOut);
        }
    }
}

static void test_primaries(void **state) {
    (void)state;
    assert_string_equal(item("count(*)"), "count( *)");
    assert_string_equal(item("COUNT(DISTINCT x)"), "count(distinct x)");
    assert_string_equal(item("DATABASE()"), "database()");
    assert_string_equal(item("connection_id() + last_insert_id()"),
                        "(+ connection_id() last_insert_id())");
    assert_string_equal(item("IF(a > 1, 'x', \"y\")"), "if( (> a 1) 'x' 'y')");
    assert_string_equal(item("replace(a, 'x', 'y')"), "replace( a 'x' 'y')");
    assert_string_equal(item("knn(v, 10, (0.1, -0.2, 3))"), "knn( v 10 [ 0.1f -0.2f 3])");
    /* A parenthesised single argument is a one-element vector... */
    assert_string_equal(item("knn(v, 10, (0.5))"), "knn( v 10 [ 0.5f])");
    assert_string_equal(item("f(((1)))"), "f( [ 1])");
    /* ...unless it is part of a larger expression. */
    assert_string_equal(item("f((1 + 2) * 3)"), "f( (* (+ 1 2) 3))");
    assert_string_equal(item("f((1), 2)"), "f( [ 1] 2)");
    assert_string_equal(item("knn(v, 10, (0.1, 0.2), {ef=200, Rescore=1, mode='x'})"),
                        "knn( v 10 [ 0.1f 0.2f] { ef=200 rescore=1 mode='x'})");
    assert_string_equal(item("{}"), "{}");
    assert_string_equal(item("(1, 'a', NULL)"), "[ 1 'a' NULL]");
    assert_string_equal(item("((1, 2), (3))"), "[ [ 1 2] 3]");
    assert_string_equal(item("(1)"), "1");
    assert_string_equal(item("@@GLOBAL.Max_Allowed_Packet"), "@@global.max_allowed_packet");
    assert_string_equal(item("@@local.x"), "@@session.x");
    assert_string_equal(item("@MyVar"), "@myvar");
}

static void test_literals(void **state) {
    (void)state;
    assert_string_equal(item("9223372036854775807"), "9223372036854775807");
    assert_string_equal(item("-9223372036854775808"), "-9223372036854775808");
    assert_string_equal(item("- 9223372036854775808"), "-9223372036854775808");
    assert_string_equal(item("0"), "0");
    assert_string_equal(item("-0"), "0");
    assert_string_equal(item("007"), "7");
    assert_string_equal(item("+5"), "5");
    assert_string_equal(item("-(5)"), "(neg 5)");
    assert_string_equal(item("- -5"), "(neg -5)");
    SqlStmt *s = parse("SELECT 1.5, .5, 1e10, 1.5E-3, -2.5, 1e-400, 1.");
    SelectStmt *q = &s->u.select;
    assert_int_equal(q->aItem[0].pExpr->kind, EXPR_FLOAT);
    assert_true(q->aItem[0].pExpr->u.f == 1.5);
    assert_true(q->aItem[1].pExpr->u.f == 0.5);
    assert_true(q->aItem[2].pExpr->u.f == 1e10);
    assert_true(q->aItem[3].pExpr->u.f == 1.5e-3);
    assert_true(q->aItem[4].pExpr->u.f == -2.5);
    assert_true(q->aItem[5].pExpr->u.f == 0.0);
    assert_true(q->aItem[6].pExpr->u.f == 1.0);
    assert_string_equal(src_text(s, q->aItem[4].pExpr), "-2.5");

    /* Strings: escapes, doubled quotes, NUL, UTF-8. */
    s = parse("SELECT 'it''s', \"a\\\"b\", 'x\\0y', '\\%\\_', "
              "'h\xc3\xa9llo \xf0\x9f\x98\x80 \xe4\xb8\xad\xe6\x96\x87', ''");
    q = &s->u.select;
    assert_int_equal(q->aItem[0].pExpr->u.s.n, 4);
    assert_string_equal(q->aItem[0].pExpr->u.s.z, "it's");
    assert_string_equal(q->aItem[1].pExpr->u.s.z, "a\"b");
    assert_int_equal(q->aItem[2].pExpr->u.s.n, 3);
    assert_memory_equal(q->aItem[2].pExpr->u.s.z, "x\0y", 4);
    assert_string_equal(q->aItem[3].pExpr->u.s.z, "\\%\\_");
    assert_string_equal(q->aItem[4].pExpr->u.s.z,
                        "h\xc3\xa9llo \xf0\x9f\x98\x80 \xe4\xb8\xad\xe6\x96\x87");
    assert_int_equal(q->aItem[5].pExpr->u.s.n, 0);
    assert_string_equal(src_text(s, q->aItem[0].pExpr), "'it''s'");

    /* Integers beyond int64 read as floats, as MySQL reads them as DECIMAL:
    ** storing one in an integer column is then a range error (executor). */
    s = parse("SELECT 9223372036854775808, -9223372036854775809, 99999999999999999999");
    q = &s->u.select;
    for (int i = 0; i < 3; i++) assert_int_equal(q->aItem[i].pExpr->kind, EXPR_FLOAT);
    assert_true(q->aItem[0].pExpr->u.f == 9223372036854775808.0);
    assert_true(q->aItem[1].pExpr->u.f == -9223372036854775809.0);
    assert_true(q->aItem[2].pExpr->u.f == 1e20);
    assert_string_equal(src_text(s, q->aItem[1].pExpr), "-9223372036854775809");
    check_error("SELECT 1e999", 7, "near '1e999' at line 1 col 8: number 1e999 out of range");
    check_error("SELECT * FROM t LIMIT 99999999999999999999", 22,
                "near '99999999999999999999' at line 1 col 23: integer 99999999999999999999 out of "
                "range");
}

static void test_positions(void **state) {
    (void)state;
    SqlStmt *s = parse("SELECT (a + b) * 2, count(*), -5, x IS NOT NULL, y NOT IN (1,2), "
                       "z BETWEEN 1 AND 3, f(a, (1)), {k=1}, `q`.r FROM t");
    SelectStmt *q = &s->u.select;
    static const char *const azText[] = {
        "(a + b) * 2", "count(*)", "-5", "x IS NOT NULL", "y NOT IN (1,2)",
        "z BETWEEN 1 AND 3", "f(a, (1))", "{k=1}", "`q`.r",
    };
    assert_int_equal(q->nItem, 9);
    for (int i = 0; i < q->nItem; i++) assert_string_equal(src_text(s, q->aItem[i].pExpr), azText[i]);
    /* Inner nodes point at their own text. */
    const Expr *pMul = q->aItem[0].pExpr;
    assert_string_equal(src_text(s, pMul->u.binary.pLeft), "(a + b)");
    assert_string_equal(src_text(s, pMul->u.binary.pLeft->u.binary.pRight), "b");
    assert_string_equal(src_text(s, q->aItem[6].pExpr->u.func.aArg[1]), "(1)");

    int line, col;
    const char *z = "SELECT\n  h\xc3\xa9 \xf0\x9f\x98\x80 x\r\nFROM t";
    size_t n = strlen(z);
    sql_pos_linecol(z, n, 0, &line, &col);
    assert_int_equal(line, 1);
    assert_int_equal(col, 1);
    sql_pos_linecol(z, n, 12, &line, &col); /* the first byte after é (a 2-byte char) */
    assert_int_equal(line, 2);
    assert_int_equal(col, 5);
    sql_pos_linecol(z, n, 17, &line, &col); /* after the 4-byte emoji */
    assert_int_equal(line, 2);
    assert_int_equal(col, 7);
    sql_pos_linecol(z, n, (int)n, &line, &col);
    assert_int_equal(line, 3);
    assert_int_equal(col, 7);
    sql_pos_linecol(z, n, 9999, &line, &col);
    assert_int_equal(line, 3);
    assert_int_equal(col, 7);
    sql_pos_linecol(z, n, -5, &line, &col);
    assert_int_equal(line, 1);
    assert_int_equal(col, 1);
}

/* ------------------------------------------------------------- writes */

static void test_insert(void **state) {
    (void)state;
    SqlStmt *s = parse("INSERT INTO Products (id, Title, `V`) VALUES (1, 'a', (0.1, -0.2, 3)),\n"
                       "  (2, NULL, (0.5)), (-3, 'c''d', (1e3, .5))");
    assert_int_equal(s->kind, STMT_INSERT);
    InsertStmt *q = &s->u.insert;
    assert_int_equal(q->bReplace, 0);
    assert_string_equal(q->zTable, "products");
    assert_int_equal(q->tablePos, 12);
    assert_int_equal(q->nCol, 3);
    assert_string_equal(q->azCol[0], "id");
    assert_string_equal(q->azCol[1], "title");
    assert_string_equal(q->azCol[2], "v");
    assert_int_equal(q->aColPos[1], 26);
    assert_int_equal(q->nRow, 3);
    for (int r = 0; r < 3; r++) assert_int_equal(q->anRowVal[r], 3);
    assert_int_equal(q->aRowPos[0], 45);
    assert_int_equal(s->zSql[q->aRowPos[1]], '(');
    assert_int_equal(s->zSql[q->aRowPos[2]], '(');
    assert_string_equal(dumps(q->aaRow[0][2]), "[ 0.1f -0.2f 3]");
    assert_string_equal(dumps(q->aaRow[1][1]), "NULL");
    assert_string_equal(dumps(q->aaRow[1][2]), "[ 0.5f]");
    assert_string_equal(dumps(q->aaRow[2][0]), "-3");
    assert_string_equal(dumps(q->aaRow[2][1]), "'c'd'");
    assert_string_equal(dumps(q->aaRow[2][2]), "[ 1000f 0.5f]");

    s = parse("REPLACE INTO t VALUES (1, 'x'); ");
    q = &s->u.insert;
    assert_int_equal(q->bReplace, 1);
    assert_int_equal(q->nCol, 0);
    assert_null(q->azCol);
    assert_int_equal(q->nRow, 1);
    assert_int_equal(q->anRowVal[0], 2);

    /* INTO is optional, as in MySQL; an empty row means "all defaults". */
    q = &parse("insert t values ()")->u.insert;
    assert_int_equal(q->nRow, 1);
    assert_int_equal(q->anRowVal[0], 0);

    /* Many rows: the arrays grow. */
    char *zBig = repeat("", 0, "INSERT INTO t VALUES (0)", "");
    size_t nBig = strlen(zBig) + 2000 * 8;
    zBig = realloc(zBig, nBig + 1);
    assert_non_null(zBig);
    for (int i = 1; i < 2000; i++) strcat(zBig, ", (1, 2)");
    q = &parse(zBig)->u.insert;
    assert_int_equal(q->nRow, 2000);
    assert_int_equal(q->anRowVal[1999], 2);
    assert_int_equal(q->aaRow[1999][1]->u.i, 2);
    free(zBig);
}

static void test_delete_update(void **state) {
    (void)state;
    SqlStmt *s = parse("DELETE FROM t WHERE id IN (1, 2)");
    assert_int_equal(s->kind, STMT_DELETE);
    assert_string_equal(s->u.del.zTable, "t");
    assert_string_equal(dumps(s->u.del.pWhere), "(in id 1 2)");
    s = parse("delete from T");
    assert_null(s->u.del.pWhere);

    s = parse("UPDATE t SET Price = price * 2, title = 'x' WHERE id = 5 OPTION strict=1");
    assert_int_equal(s->kind, STMT_UPDATE);
    UpdateStmt *u = &s->u.update;
    assert_string_equal(u->zTable, "t");
    assert_int_equal(u->nSet, 2);
    assert_string_equal(u->aSet[0].zName, "price");
    assert_int_equal(u->aSet[0].pos, 13);
    assert_string_equal(dumps(u->aSet[0].pValue), "(* price 2)");
    assert_string_equal(u->aSet[1].zName, "title");
    assert_string_equal(dumps(u->pWhere), "(= id 5)");
    assert_int_equal(u->nOption, 1);
    assert_string_equal(u->aOption[0].zName, "strict");
    s = parse("UPDATE t SET a = 1");
    assert_null(s->u.update.pWhere);
    assert_int_equal(s->u.update.nOption, 0);
    /* a multi-value's list, its empty list, and a parenthesised value */
    s = parse("UPDATE t SET J.a.B = 1, j['x y'][2] = 'v' WHERE id = 1");
    assert_string_equal(s->u.update.aSet[0].zName, "j");
    assert_int_equal(s->u.update.aSet[0].nPath, 2);
    assert_string_equal(s->u.update.aSet[0].aPath[1].zKey, "B");
    assert_int_equal(s->u.update.aSet[1].nPath, 2);
    assert_int_equal(s->u.update.aSet[1].aPath[1].iIndex, 2);
    s = parse("UPDATE t SET tags = (3, 1), e = (), n = (4)");
    assert_string_equal(dumps(s->u.update.aSet[0].pValue), "[ 3 1]");
    assert_string_equal(dumps(s->u.update.aSet[1].pValue), "[]");
    assert_string_equal(dumps(s->u.update.aSet[2].pValue), "[ 4]");
    s = parse("INSERT INTO t (id, tags) VALUES (1, ()), (2, ( ))");
    assert_string_equal(dumps(s->u.insert.aaRow[0][1]), "[]");
    assert_string_equal(dumps(s->u.insert.aaRow[1][1]), "[]");
    s = parse("SELECT ANY(x > 5 AND x < 10 FOR x IN j.ar), INDEXOF(y = 'a' for Y in j) FROM t");
    assert_string_equal(dumps(s->u.select.aItem[0].pExpr), "any( (and (> x 5) (< x 10)) x j.ar)");
    assert_int_equal(s->u.select.aItem[0].pExpr->u.func.bFor, 1);
    assert_string_equal(dumps(s->u.select.aItem[1].pExpr), "indexof( (= y 'a') y j)");
    check_error("SELECT ANY(x FOR 1 IN j) FROM t", 17, "near '1 IN j) FROM t' at line 1 col 18: expected a name for "
                "the array's element (FOR x IN ...)");
    check_error("SELECT ANY(x FOR x j) FROM t", 19, "near 'j) FROM t' at line 1 col 20: expected IN and the array "
                "(FOR x IN j.arr)");
    s = parse("SELECT id FROM t WHERE ANY(tags) IN (1, 2) AND ALL(tags) > 3");
    assert_string_equal(dumps(s->u.select.pWhere), "(and (in any( tags) 1 2) (> all( tags) 3))");
}

/* ------------------------------------------------------------- DDL */

static void test_create(void **state) {
    (void)state;
    SqlStmt *s = parse("CREATE TABLE products (title TEXT, body TEXT indexed stored, price FLOAT, "
                       "tags JSON, v FLOAT_VECTOR KNN_TYPE='hnsw' KNN_DIMS='4' HNSW_SIMILARITY='L2' "
                       "model_name='org/m' FROM='title,body' knn_x=-4) morphology='stem_en' "
                       "min_prefix_len='3'");
    assert_int_equal(s->kind, STMT_CREATE_TABLE);
    CreateTableStmt *c = &s->u.create;
    assert_string_equal(c->zTable, "products");
    assert_int_equal(c->bIfNotExists, 0);
    assert_int_equal(c->nCol, 5);
    assert_string_equal(c->aCol[0].zName, "title");
    assert_string_equal(c->aCol[0].zType, "text");
    assert_int_equal(c->aCol[0].typePos, 29);
    assert_int_equal(c->aCol[0].nFlag, 0);
    assert_int_equal(c->aCol[1].nFlag, 2);
    assert_string_equal(c->aCol[1].azFlag[0], "indexed");
    assert_string_equal(c->aCol[1].azFlag[1], "stored");
    assert_int_equal(s->zSql[c->aCol[1].aFlagPos[1]], 's');
    assert_string_equal(c->aCol[4].zName, "v");
    assert_string_equal(c->aCol[4].zType, "float_vector");
    assert_int_equal(c->aCol[4].nFlag, 0);
    assert_int_equal(c->aCol[4].nOpt, 6);
    assert_string_equal(c->aCol[4].aOpt[0].zName, "knn_type");
    assert_string_equal(dumps(c->aCol[4].aOpt[0].pValue), "'hnsw'");
    assert_string_equal(c->aCol[4].aOpt[2].zName, "hnsw_similarity");
    assert_string_equal(dumps(c->aCol[4].aOpt[2].pValue), "'L2'");
    assert_string_equal(c->aCol[4].aOpt[4].zName, "from");
    assert_string_equal(dumps(c->aCol[4].aOpt[5].pValue), "-4");
    assert_int_equal(c->nOpt, 2);
    assert_string_equal(c->aOpt[0].zName, "morphology");
    assert_string_equal(dumps(c->aOpt[1].pValue), "'3'");

    s = parse("create table if not exists `My Table` (id bigint, f int attribute, s string "
                "engine=columnar) type = 'rt', stopwords='en' rt_mem_limit=128");
    c = &s->u.create;
    assert_int_equal(c->bIfNotExists, 1);
    assert_string_equal(c->zTable, "my table");
    assert_int_equal(c->nCol, 3);
    assert_string_equal(c->aCol[1].azFlag[0], "attribute");
    assert_string_equal(dumps(c->aCol[2].aOpt[0].pValue), "columnar");
    assert_int_equal(c->nOpt, 3);
    assert_string_equal(c->aOpt[0].zName, "type");
    assert_string_equal(dumps(c->aOpt[2].pValue), "128");
    /* Non-reserved words as column names; a table called "if". */
    c = &parse("CREATE TABLE if (status int, value float, key string)")->u.create;
    assert_string_equal(c->zTable, "if");
    assert_int_equal(c->bIfNotExists, 0);
    assert_string_equal(c->aCol[2].zName, "key");
}

/* ALTER TABLE t name = 'value' ...: table options, as CREATE TABLE's. */
static void test_alter_options(void **state) {
    (void)state;
    SqlStmt *s = parse("ALTER TABLE t morphology='stem_en' stopwords = 'en', min_word_len=2");
    assert_int_equal(s->kind, STMT_ALTER_TABLE);
    AlterTableStmt *a = &s->u.alter;
    assert_int_equal(a->kind, ALTER_SET_OPTIONS);
    assert_string_equal(a->zTable, "t");
    assert_int_equal(a->nOpt, 3);
    assert_string_equal(a->aOpt[0].zName, "morphology");
    assert_string_equal(dumps(a->aOpt[0].pValue), "'stem_en'");
    assert_string_equal(a->aOpt[1].zName, "stopwords");
    assert_string_equal(dumps(a->aOpt[2].pValue), "2");
    /* a word not followed by '=' is no option */
    check_error("ALTER TABLE t RENAME TO x", 14,
                "near 'RENAME TO x' at line 1 col 15: expected ADD COLUMN, DROP COLUMN, MODIFY COLUMN, "
                "REBUILD EMBEDDINGS or a table option (name = 'value')");
    check_error("ALTER TABLE t morphology='a' x", 30,
                "unexpected end of statement at line 1 col 31: expected '='");
    check_error("ALTER TABLE t morphology='a',", 29,
                "unexpected end of statement at line 1 col 30: expected a table option");
}

static void test_drop_truncate(void **state) {
    (void)state;
    SqlStmt *s = parse("DROP TABLE t");
    assert_int_equal(s->kind, STMT_DROP_TABLE);
    assert_string_equal(s->u.drop.zTable, "t");
    assert_int_equal(s->u.drop.bIfExists, 0);
    s = parse("drop table if exists T;");
    assert_int_equal(s->u.drop.bIfExists, 1);
    assert_string_equal(s->u.drop.zTable, "t");
    assert_int_equal(s->u.drop.tablePos, 21);
    s = parse("TRUNCATE TABLE t");
    assert_int_equal(s->kind, STMT_TRUNCATE);
    assert_string_equal(s->u.truncate.zTable, "t");
    s = parse("TRUNCATE TABLE t WITH RECONFIGURE");
    assert_string_equal(s->u.truncate.zTable, "t");
}

/* ------------------------------------------------------------- SHOW */

static void check_show(const char *z, ShowKind kind, const char *zTable, const char *zLike,
                       int scope, int bFull) {
    SqlStmt *s = parse(z);
    assert_int_equal(s->kind, STMT_SHOW);
    const ShowStmt *sh = &s->u.show;
    if (sh->kind != kind) fail_msg("%s: kind %d, want %d", z, sh->kind, kind);
    if (zTable) {
        assert_non_null(sh->zTable);
        assert_string_equal(sh->zTable, zTable);
        assert_int_equal(sh->tablePos, (int)(strstr(z, "t1") - z));
    } else {
        assert_null(sh->zTable);
    }
    if (zLike) {
        assert_non_null(sh->zLike);
        assert_string_equal(sh->zLike, zLike);
    } else {
        assert_null(sh->zLike);
    }
    assert_int_equal(sh->scope, scope);
    assert_int_equal(sh->bFull, bFull);
}

static void test_show(void **state) {
    (void)state;
    check_show("SHOW TABLES", SHOW_TABLES, NULL, NULL, 0, 0);
    check_show("show tables like 'pro%'", SHOW_TABLES, NULL, "pro%", 0, 0);
    check_show("SHOW FULL TABLES FROM loupe LIKE 'a\\_b'", SHOW_TABLES, NULL, "a\\_b", 0, 1);
    check_show("SHOW CREATE TABLE t1", SHOW_CREATE_TABLE, "t1", NULL, 0, 0);
    check_show("DESCRIBE t1", SHOW_DESCRIBE, "t1", NULL, 0, 0);
    check_show("desc t1", SHOW_DESCRIBE, "t1", NULL, 0, 0);
    check_show("DESC t1 LIKE 'ti%'", SHOW_DESCRIBE, "t1", "ti%", 0, 0);
    check_show("SHOW COLUMNS FROM t1", SHOW_DESCRIBE, "t1", NULL, 0, 0);
    check_show("SHOW FULL COLUMNS FROM t1 LIKE 'x'", SHOW_DESCRIBE, "t1", "x", 0, 1);
    check_show("SHOW FIELDS IN t1", SHOW_DESCRIBE, "t1", NULL, 0, 0);
    check_show("SHOW VARIABLES", SHOW_VARIABLES, NULL, NULL, 0, 0);
    check_show("SHOW GLOBAL VARIABLES LIKE 'max%'", SHOW_VARIABLES, NULL, "max%", 2, 0);
    check_show("SHOW SESSION VARIABLES", SHOW_VARIABLES, NULL, NULL, 1, 0);
    check_show("SHOW LOCAL VARIABLES", SHOW_VARIABLES, NULL, NULL, 1, 0);
    /* WHERE Variable_name = 'x' matches x exactly: its _ and % are escaped. */
    check_show("SHOW VARIABLES WHERE Variable_name = 'max_allowed_packet'", SHOW_VARIABLES, NULL,
               "max\\_allowed\\_packet", 0, 0);
    check_show("SHOW SESSION VARIABLES WHERE `VARIABLE_NAME` LIKE 'a%'", SHOW_VARIABLES, NULL, "a%",
               1, 0);
    check_show("SHOW STATUS", SHOW_STATUS, NULL, NULL, 0, 0);
    check_show("SHOW GLOBAL STATUS LIKE 'uptime'", SHOW_STATUS, NULL, "uptime", 2, 0);
    check_show("SHOW DATABASES", SHOW_DATABASES, NULL, NULL, 0, 0);
    check_show("SHOW META", SHOW_META, NULL, NULL, 0, 0);
    check_show("SHOW META LIKE 'total%'", SHOW_META, NULL, "total%", 0, 0);
    check_show("SHOW WARNINGS", SHOW_WARNINGS, NULL, NULL, 0, 0);
    check_show("SHOW PLAN", SHOW_PLAN, NULL, NULL, 0, 0);
    check_show("show profile", SHOW_PROFILE, NULL, NULL, 0, 0);
    check_show("SHOW COLLATION", SHOW_COLLATION, NULL, NULL, 0, 0);
    check_show("SHOW COLLATION LIKE 'utf8%'", SHOW_COLLATION, NULL, "utf8%", 0, 0);
    check_show("SHOW CHARACTER SET", SHOW_CHARSET, NULL, NULL, 0, 0);
    check_show("SHOW CHARSET LIKE 'u%'", SHOW_CHARSET, NULL, "u%", 0, 0);
    check_show("SHOW ENGINES", SHOW_ENGINES, NULL, NULL, 0, 0);
    check_show("SHOW TABLE t1 STATUS", SHOW_TABLE_STATUS, "t1", NULL, 0, 0);
    check_show("show table t1 settings", SHOW_TABLE_SETTINGS, "t1", NULL, 0, 0);
    check_show("SHOW TABLE t1 STATUS LIKE 'id_%'", SHOW_TABLE_STATUS, "t1", "id_%", 0, 0);
}

/* ------------------------------------------------------------- SET */

static void check_set_item(const SetStmt *st, int i, const char *zName, int scope, const char *zVal) {
    assert_true(i < st->nItem);
    assert_string_equal(st->aItem[i].zName, zName);
    assert_int_equal(st->aItem[i].scope, scope);
    assert_string_equal(dumps(st->aItem[i].pValue), zVal);
}

static void test_set(void **state) {
    (void)state;
    SqlStmt *s = parse("SET autocommit=0");
    assert_int_equal(s->kind, STMT_SET);
    assert_int_equal(s->u.set.nItem, 1);
    check_set_item(&s->u.set, 0, "autocommit", 0, "0");
    assert_int_equal(s->u.set.aItem[0].pos, 4);

    /* A scope word applies to the assignments after it. */
    s = parse("SET GLOBAL a = 1, B = 'x', SESSION c = ON, LOCAL d = DEFAULT");
    assert_int_equal(s->u.set.nItem, 4);
    check_set_item(&s->u.set, 0, "a", 2, "1");
    check_set_item(&s->u.set, 1, "b", 2, "'x'");
    check_set_item(&s->u.set, 2, "c", 1, "on");
    check_set_item(&s->u.set, 3, "d", 1, "default");

    s = parse("SET @@session.sql_mode = '', @@GLOBAL.x = -1, @@y = off");
    check_set_item(&s->u.set, 0, "sql_mode", 1, "''");
    check_set_item(&s->u.set, 1, "x", 2, "-1");
    check_set_item(&s->u.set, 2, "y", 0, "off");
    s = parse("SET @MyVar := 5 + 1, character_set_results = NULL");
    check_set_item(&s->u.set, 0, "myvar", 3, "(+ 5 1)");
    check_set_item(&s->u.set, 1, "character_set_results", 0, "NULL");

    s = parse("SET NAMES utf8mb4");
    check_set_item(&s->u.set, 0, "names", 0, "'utf8mb4'");
    s = parse("set names 'UTF8' collate 'utf8_general_ci'");
    assert_int_equal(s->u.set.nItem, 2);
    check_set_item(&s->u.set, 0, "names", 0, "'UTF8'");
    check_set_item(&s->u.set, 1, "collation_connection", 0, "'utf8_general_ci'");
    s = parse("SET NAMES DEFAULT COLLATE utf8mb4_bin");
    check_set_item(&s->u.set, 0, "names", 0, "default");
    check_set_item(&s->u.set, 1, "collation_connection", 0, "'utf8mb4_bin'");
    s = parse("SET CHARACTER SET utf8");
    check_set_item(&s->u.set, 0, "character_set", 0, "'utf8'");
    s = parse("SET CHARSET 'latin1'");
    check_set_item(&s->u.set, 0, "character_set", 0, "'latin1'");
    /* A variable called names. */
    s = parse("SET names = 5");
    check_set_item(&s->u.set, 0, "names", 0, "5");

    s = parse("SET SESSION TRANSACTION ISOLATION LEVEL  READ COMMITTED ;");
    check_set_item(&s->u.set, 0, "transaction", 1, "'ISOLATION LEVEL  READ COMMITTED'");
    s = parse("SET TRANSACTION READ ONLY");
    check_set_item(&s->u.set, 0, "transaction", 0, "'READ ONLY'");
}

static void test_misc_statements(void **state) {
    (void)state;
    assert_int_equal(parse("BEGIN")->kind, STMT_BEGIN);
    assert_int_equal(parse("begin work")->kind, STMT_BEGIN);
    assert_int_equal(parse("START TRANSACTION")->kind, STMT_BEGIN);
    assert_int_equal(parse("COMMIT")->kind, STMT_COMMIT);
    assert_int_equal(parse("commit work;")->kind, STMT_COMMIT);
    assert_int_equal(parse("ROLLBACK")->kind, STMT_ROLLBACK);
    assert_int_equal(parse("ROLLBACK WORK")->kind, STMT_ROLLBACK);
    SqlStmt *s = parse("USE Manticore");
    assert_int_equal(s->kind, STMT_USE);
    assert_string_equal(s->u.use.zName, "manticore");

    /* CALL: the arguments as written, each with its AS name. */
    s = parse("CALL KEYWORDS('a b', 'docs', 1 AS Stats)");
    assert_int_equal(s->kind, STMT_CALL);
    assert_string_equal(s->u.call.zName, "keywords");
    assert_int_equal(s->u.call.nArg, 3);
    assert_int_equal(s->u.call.aArg[0]->kind, EXPR_STRING);
    assert_null(s->u.call.azAs[0]);
    assert_string_equal(s->u.call.azAs[2], "stats");
    assert_int_equal(s->u.call.aAsPos[2], 34);
    s = parse("call snippets(('x', 'y'), 't', 'q', '<i>' AS before_match, 5 as limit);");
    assert_int_equal(s->u.call.nArg, 5);
    assert_int_equal(s->u.call.aArg[0]->kind, EXPR_LIST);
    assert_int_equal(s->u.call.aArg[0]->u.list.nItem, 2);
    assert_string_equal(s->u.call.azAs[4], "limit");
    assert_int_equal(parse("CALL x()")->u.call.nArg, 0);
    check_error("CALL", 4, "unexpected end of statement at line 1 col 5: expected a procedure name "
                           "(KEYWORDS or SNIPPETS)");
    check_error("CALL KEYWORDS 'a'", 14, "near ''a'' at line 1 col 15: expected '('");
    check_error("CALL KEYWORDS('a' 'b')", 18, "near ''b')' at line 1 col 19: expected ',' or ')'");
    check_error("CALL KEYWORDS('a', 1 AS)", 23, "near ')' at line 1 col 24: expected an option name "
                                                 "after AS");
    check_error("CALL KEYWORDS('a') x", 19, "near 'x' at line 1 col 20: expected end of statement");

    /* Trailing ';', whitespace and comments are fine. */
    parse("SELECT 1;");
    parse("SELECT 1 ; ;; -- done\n");
    parse("SELECT 1 /* c */ # x");
    parse("/* leading */ SELECT 1");
    parse("\n\t SELECT\n1\n");
    parse("/*!40101 SET NAMES utf8 */ SELECT 1");
    /* The length given counts, not the NUL. */
    parse_n("SELECT 1garbage", 8);
}

/* ------------------------------------------------------------- errors */

static void test_errors(void **state) {
    (void)state;
    check_error("SELECT * FORM t", 9, "near 'FORM t' at line 1 col 10: expected FROM");
    check_error("SELECT FROM", 7, "near 'FROM' at line 1 col 8: expected an expression");
    check_error("SELECT * FROM", 13, "unexpected end of statement at line 1 col 14: expected a table name");
    check_error("SELECT * FROM ;", 14,
                "unexpected end of statement at line 1 col 15: expected a table name");
    check_error("INSERT INTO t VALUES (1,", 24,
                "unexpected end of statement at line 1 col 25: expected an expression");
    check_error("SELECT 'abc", 7, "near ''abc' at line 1 col 8: unterminated string");
    check_error("SELECT `abc", 7, "near '`abc' at line 1 col 8: unterminated quoted identifier");
    check_error("SELECT 1 /* abc", 9, "near '/* abc' at line 1 col 10: unterminated comment");
    check_error("SELECT ? FROM t", 7, "near '? FROM t' at line 1 col 8: invalid character");
    check_error("SELECT 1; SELECT 2", 10,
                "near 'SELECT 2' at line 1 col 11: multiple statements are not supported "
                "(multi-statement mode is off)");
    check_error("SELECT 1;x", 9,
                "near 'x' at line 1 col 10: multiple statements are not supported "
                "(multi-statement mode is off)");
    check_error("SELECT * FROM t WHER id = 1", 16,
                "near 'WHER id = 1' at line 1 col 17: expected WHERE, GROUP BY, ORDER BY, LIMIT, "
                "OPTION or end of statement");
    check_error("SELECT * FROM t WHERE id = 1 2", 29,
                "near '2' at line 1 col 30: expected GROUP BY, ORDER BY, LIMIT, OPTION or end of "
                "statement");
    check_error("SELECT * FROM t WHERE", 21,
                "unexpected end of statement at line 1 col 22: expected an expression");
    check_error("SELECT * FROM t WHERE a IS 5", 27,
                "near '5' at line 1 col 28: expected NULL or NOT NULL");
    check_error("SELECT * FROM t WHERE a IN 1", 27, "near '1' at line 1 col 28: expected '('");
    check_error("SELECT * FROM t WHERE a IN (1 2)", 30, "near '2)' at line 1 col 31: expected ',' or ')'");
    check_error("SELECT * FROM t WHERE a BETWEEN 1 OR 2", 34,
                "near 'OR 2' at line 1 col 35: expected AND");
    check_error("SELECT * FROM t ORDER id", 22, "near 'id' at line 1 col 23: expected BY");
    check_error("SELECT * FROM t LIMIT 'a'", 22, "near ''a'' at line 1 col 23: expected a number");
    check_error("SELECT * FROM t LIMIT -1", 22, "near '-1' at line 1 col 23: expected a number");
    check_error("SELECT (1", 9, "unexpected end of statement at line 1 col 10: expected ')'");
    check_error("SELECT (1, 2", 12, "unexpected end of statement at line 1 col 13: expected ',' or ')'");
    check_error("SELECT f(1", 10, "unexpected end of statement at line 1 col 11: expected ',' or ')'");
    check_error("SELECT a AS FROM t", 12, "near 'FROM t' at line 1 col 13: expected an alias");
    check_error("SELECT {a 1}", 10, "near '1}' at line 1 col 11: expected '='");
    check_error("SELECT 1 OPTION", 15,
                "unexpected end of statement at line 1 col 16: expected an option name");
    check_error("INSERT INTO t (a, b VALUES (1)", 20,
                "near 'VALUES (1)' at line 1 col 21: expected ',' or ')'");
    check_error("INSERT INTO t SET a = 1", 14,
                "near 'SET a = 1' at line 1 col 15: expected VALUES or a column list");
    check_error("INSERT INTO t VALUES 1", 21, "near '1' at line 1 col 22: expected '('");
    check_error("DELETE t WHERE id = 1", 7, "near 't WHERE id = 1' at line 1 col 8: expected FROM");
    check_error("UPDATE t SET a 1", 15, "near '1' at line 1 col 16: expected '='");
    check_error("CREATE TABLE t (a)", 17, "near ')' at line 1 col 18: expected a column type");
    check_error("CREATE TABLE t ()", 16, "near ')' at line 1 col 17: expected a column name");
    check_error("CREATE TABLE t (a int 5)", 22, "near '5)' at line 1 col 23: expected ',' or ')'");
    check_error("CREATE TABLE t (a int) x", 24,
                "unexpected end of statement at line 1 col 25: expected '='");
    check_error("CREATE TABLE t (a int) 5", 23,
                "near '5' at line 1 col 24: expected a table option (name = 'value') or end of "
                "statement");
    check_error("CREATE t (a int)", 7, "near 't (a int)' at line 1 col 8: expected TABLE");
    check_error("DROP TABLE IF EXISTS", 20,
                "unexpected end of statement at line 1 col 21: expected a table name");
    check_error("SHOW FOO", 5,
                "near 'FOO' at line 1 col 6: expected TABLES, CREATE TABLE, COLUMNS, VARIABLES, "
                "STATUS, DATABASES, META, PLAN, PROFILE, WARNINGS, COLLATION, CHARACTER SET, ENGINES or TABLE");
    check_error("SHOW PLAN FOR x", 10, "near 'FOR x' at line 1 col 11: expected end of statement");
    check_error("SHOW GLOBAL TABLES", 12, "near 'TABLES' at line 1 col 13: expected VARIABLES or STATUS");
    check_error("SHOW TABLES LIKE x", 17, "near 'x' at line 1 col 18: expected a string");
    check_error("SHOW VARIABLES WHERE x = 1", 21,
                "near 'x = 1' at line 1 col 22: expected Variable_name = 'name' or Variable_name "
                "LIKE 'pattern'");
    check_error("SHOW TABLE t", 12, "unexpected end of statement at line 1 col 13: expected STATUS or SETTINGS");
    check_error("SHOW TABLE t SETTINGS LIKE 'x'", 22, "near 'LIKE 'x'' at line 1 col 23: expected end of statement");
    check_error("SET", 3, "unexpected end of statement at line 1 col 4: expected a variable name");
    check_error("SET x 1", 6, "near '1' at line 1 col 7: expected '='");
    check_error("SET TRANSACTION", 15,
                "unexpected end of statement at line 1 col 16: expected ISOLATION LEVEL, READ WRITE "
                "or READ ONLY");
    check_error("SET TRANSACTION READ 'x", 21, "near ''x' at line 1 col 22: unterminated string");
    check_error("START", 5, "unexpected end of statement at line 1 col 6: expected TRANSACTION");
    check_error("COMMIT x", 7, "near 'x' at line 1 col 8: expected WORK or end of statement");
    check_error("SELECT `` FROM t", 7, "near '`` FROM t' at line 1 col 8: a name cannot be empty");
    const char zNulName[] = "SELECT a FROM `t\0`";
    LpError errNul = parse_fail_n(zNulName, sizeof(zNulName) - 1);
    assert_string_equal(errNul.zMsg, "near '`t...' at line 1 col 15: a name cannot contain a NUL byte");
    check_error("FOO BAR", 0, "near 'FOO BAR' at line 1 col 1: expected a statement (SELECT, INSERT, SHOW...)");
    check_error("SELECT NOT", 10, "unexpected end of statement at line 1 col 11: expected an expression");
    check_error("SELECT 'a' 'b'", 11, "near ''b'' at line 1 col 12: expected FROM");
    check_error("SELECT a NOT b", 9, "near 'NOT b' at line 1 col 10: expected FROM");

    /* Multi-line: line and column of the offending token. */
    check_error("SELECT *\nFROM t\nWHERE id = = 1", 27, "near '= 1' at line 3 col 12: expected an expression");
    check_error("SELECT *\r\n  FROM t\n  WHERE\n  -- nothing\n", 26,
                "unexpected end of statement at line 3 col 8: expected an expression");

    /* The quoted text: cut at 32 bytes with "...", never inside a UTF-8
    ** character, and at a NUL byte. */
    check_error("SELECT * FORM t WHERE a = 1 AND b = 2 AND c = 3", 9,
                "near 'FORM t WHERE a = 1 AND b = 2 AND...' at line 1 col 10: expected FROM");
    check_error("SELECT * FORM \xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
                "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9",
                9, "near 'FORM \xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
                   "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9...' at line 1 col 10: expected FROM");
    check_error("SELECT * FORM \xf0\x9f\x98\x80\xf0\x9f\x98\x80\xf0\x9f\x98\x80\xf0\x9f\x98\x80"
                "\xf0\x9f\x98\x80\xf0\x9f\x98\x80\xf0\x9f\x98\x80",
                9, "near 'FORM \xf0\x9f\x98\x80\xf0\x9f\x98\x80\xf0\x9f\x98\x80\xf0\x9f\x98\x80"
                   "\xf0\x9f\x98\x80\xf0\x9f\x98\x80...' at line 1 col 10: expected FROM");
    const char zNul[] = "SELECT 1 2\0 FROM t";
    LpError err = parse_fail_n(zNul, sizeof(zNul) - 1);
    assert_string_equal(err.zMsg, "near '2...' at line 1 col 10: expected FROM");
    const char zNul2[] = "SELECT 'a\0b', FROM t";
    err = parse_fail_n(zNul2, sizeof(zNul2) - 1);
    assert_string_equal(err.zMsg, "near 'FROM t' at line 1 col 15: expected an expression");
}

static void test_empty(void **state) {
    (void)state;
    static const char *const az[] = {"", "   ", "\n\t", "-- only a comment", "/* c */", ";", " ; ;"};
    for (size_t i = 0; i < sizeof(az) / sizeof(az[0]); i++) {
        LpError err = parse_fail_n(az[i], strlen(az[i]));
        assert_int_equal(err.code, LP_BADINPUT);
        assert_int_equal(err.detail, SQL_ER_EMPTY_QUERY);
        assert_string_equal(err.zMsg, "query was empty");
    }
    SqlStmt *s = (SqlStmt *)1;
    assert_int_equal(sql_parse(&gArena, NULL, 0, &s, NULL), LP_BADINPUT);
    assert_null(s);
    /* A NULL err is allowed. */
    assert_int_equal(sql_parse(&gArena, "SELECT FROM", 11, &s, NULL), LP_BADINPUT);
}

static void test_nesting(void **state) {
    (void)state;
    /* SQL_MAX_NESTING levels parse... */
    char *z = repeat("(", SQL_MAX_NESTING - 2, "1", ")");
    char zSql[4096];
    snprintf(zSql, sizeof(zSql), "SELECT %s", z);
    parse(zSql);
    free(z);
    /* ...more do not, whatever nests: parentheses, calls, unary operators. */
    static const struct {
        const char *zOpen, *zMid, *zClose;
    } aCase[] = {
        {"(", "1", ")"}, {"f(", "1", ")"}, {"- ", "a", ""}, {"NOT ", "a", ""},
        {"!", "a", ""},  {"{a=", "1", "}"}, {"(1,", "2", ")"}, {"x IN (", "1", ")"},
    };
    for (size_t i = 0; i < sizeof(aCase) / sizeof(aCase[0]); i++) {
        z = repeat(aCase[i].zOpen, SQL_MAX_NESTING + 1, aCase[i].zMid, aCase[i].zClose);
        char *zQ = malloc(strlen(z) + 32);
        assert_non_null(zQ);
        sprintf(zQ, "SELECT %s", z);
        LpError err = parse_fail_n(zQ, strlen(zQ));
        assert_int_equal(err.code, LP_BADINPUT);
        assert_int_equal(err.detail, SQL_ER_PARSE_ERROR);
        if (!strstr(err.zMsg, ": expression nested too deeply (more than 200 levels)")) {
            fail_msg("%s...: %s", aCase[i].zOpen, err.zMsg);
        }
        free(zQ);
        free(z);
    }
    /* A hundred thousand levels: no stack overflow, the same error. */
    z = repeat("(", 100000, "", "");
    memcpy(z, "SELECT ", 7);
    LpError err = parse_fail_n(z, strlen(z));
    if (!strstr(err.zMsg, "at line 1 col 208: expression nested too deeply")) fail_msg("%s", err.zMsg);
    free(z);

    /* Long operator chains are loops, not recursion; their tree height is
    ** capped for whoever walks the tree recursively. */
    z = repeat("1+", SQL_MAX_EXPR_HEIGHT, "1", "");
    char *zQ = malloc(strlen(z) + 32);
    assert_non_null(zQ);
    sprintf(zQ, "SELECT %s", z);
    err = parse_fail_n(zQ, strlen(zQ));
    assert_string_equal(err.zMsg,
                        "near '1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+...' at line 1 col 8: expression "
                        "too complex (more than 1000 nested operators)");
    zQ[7 + 2 * (SQL_MAX_EXPR_HEIGHT - 1) - 1] = 0; /* 999 '+' */
    SqlStmt *s = parse(zQ);
    assert_int_equal(s->u.select.aItem[0].pExpr->kind, EXPR_BINARY);
    free(zQ);
    free(z);
    /* Wide is fine: an IN list of many values is one level. */
    z = repeat("1,", 20000, "1", "");
    zQ = malloc(strlen(z) + 64);
    assert_non_null(zQ);
    sprintf(zQ, "SELECT * FROM t WHERE id IN (%s)", z);
    s = parse(zQ);
    assert_int_equal(s->u.select.pWhere->u.in.nList, 20001);
    free(zQ);
    free(z);
}

static int setup(void **state) {
    (void)state;
    arena_init(&gArena, 0);
    return 0;
}

static int teardown(void **state) {
    (void)state;
    arena_free(&gArena);
    return 0;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_select_point),  cmocka_unit_test(test_select_items),
        cmocka_unit_test(test_select_clauses), cmocka_unit_test(test_keywords_as_names),
        cmocka_unit_test(test_precedence),    cmocka_unit_test(test_primaries),
        cmocka_unit_test(test_literals),      cmocka_unit_test(test_positions),
        cmocka_unit_test(test_insert),        cmocka_unit_test(test_delete_update),
        cmocka_unit_test(test_create),        cmocka_unit_test(test_alter_options),
        cmocka_unit_test(test_drop_truncate),
        cmocka_unit_test(test_show),          cmocka_unit_test(test_set),
        cmocka_unit_test(test_misc_statements), cmocka_unit_test(test_errors),
        cmocka_unit_test(test_empty),         cmocka_unit_test(test_nesting),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
