/*
** match.h — the full-text query language inside MATCH('…'): parsing into
** a syntax tree.
**
** The language (Manticore / Sphinx extended syntax, plus Lucene aliases):
**   hello world          both words (implicit AND)
**   hello | world        either word; `|` binds tighter than the implicit
**                        AND, as in Sphinx: `a b | c` is a AND (b OR c)
**   -hello  !hello       NOT: documents without the word (only next to
**                        something positive: a query of only NOTs is an error)
**   +hello               Lucene's "required": the same as a plain word
**   "hello world"        phrase: the words at consecutive positions
**   "hello world"~3      proximity: all the words within a window of
**                        3 + number of words positions (Sphinx semantics)
**   hel*                 prefix: any term starting with the normalised prefix
**   "exact * phrase"     inside an exact phrase, a '*' standing alone is one
**                        word position any word fills ("a * * b": two words
**                        between a and b); '\*' is a literal star (which
**                        separates words); a star joined to a word, or in a
**                        proximity or quorum, is an error
**   "(a | b) c"          alternatives (Manticore): a group inside a phrase
**                        whose parts '|' separates stands for each in turn,
**                        so this is the OR of "a c" and "b c"; a part may be
**                        several words or hold groups ("((a b) | c) d");
**                        at most FTS_MATCH_MAX_PHRASES phrases. Parentheses
**                        with no '|' in them only group, and a '|' outside
**                        parentheses separates words
**   word^1.5             keyword IDF boost (Manticore): the word's idf is
**                        multiplied by the number (above 0, at most
**                        FTS_MATCH_MAX_BOOST) wherever the ranking uses it;
**                        matching is unchanged. On words only (also
**                        `^word^2`, `word$^2`), not on phrases, prefixes,
**                        groups or the operands of `<<`/NEAR
**   "a b c d"/3          quorum: at least 3 of the words (or /0.5: half of
**                        them, rounded to nearest, as Sphinx does); a group
**                        with '|' ("a (b | c) d"/2, Manticore's) counts as
**                        one of them, its '(', '|' and ')' marked in aMark
**                        for the planner; a '|' outside a group, or a group
**                        with '|' inside another, is an error
**   hello MAYBE world    hello required; world only adds to the score
**                        (binds like `|`)
**   ^hello  world$       the word (or exact phrase) at the start / end of
**                        a field: "^a b$" inside quotes works too
**   a << b << "c d"      strict order: each operand after the previous
**                        one, in one field; with an operand that is not
**                        a word, an exact phrase or an OR list of them
**                        ((bag of words) << "exact phrase" << red|green,
**                        as in Manticore) the chain is an FTSN_ORDER
**   a NEAR/3 b           generalised proximity: at most 3 positions apart,
**                        in either order, in one field; a longer chain is
**                        matched as Sphinx's automaton matches it (the
**                        planner's business: search.c, near_scan); a
**                        group operand's items join the chain in its
**                        place with its distance and its negations are
**                        ANDed around it (`(a -x) NEAR/3 c` parses as
**                        AND(NEAR(a, /3, c), NOT(x))), and a NEAR chain in
**                        parentheses first in another is spliced in too;
**                        an operand that is more than words (a proximity
**                        phrase, a '<<' chain: `a << b NEAR/3 c` is
**                        `(a << b) NEAR/3 c`, as in Sphinx) makes the chain
**                        an FTSN_NEAR_ANY
**   a NOTNEAR/3 b        a where no b is within 3 positions, either side,
**                        in one field (two operands; b counts as negated)
**   a SENTENCE b         a and b in one sentence, any order; PARAGRAPH: in
**                        one paragraph (boundaries come from the table's
**                        index_sp; without it, in one field)
**                        (`<<`, NEAR, SENTENCE and PARAGRAPH bind looser
**                        than `|` and tighter
**                        than the implicit AND; their operands are words,
**                        exact phrases and OR lists of them (`<<`'s may
**                        also be groups, prefixes, wildcards, quorums and
**                        proximity phrases, not negations; NEAR's, groups
**                        of them, as above); a chain with
**                        OR lists is parsed as the OR of one chain per
**                        choice, at most FTS_MATCH_MAX_PHRASES; NOTNEAR's
**                        second operand takes no list; one chain uses one
**                        operator)
**   t?st  tes%  c?t*     with FTS_MATCH_INLINE_WILDCARDS (min_infix_len tables,
**                        as in Manticore): in a word, '?' is any one
**                        character and '%' any one or none, so the word is
**                        a wildcard (FTSN_WILDCARD, its pattern keeping
**                        them); '\?' and '\%' are separators, and a '?' or
**                        '%' alone (no letter or digit in its word) is
**                        nothing. Without the flag they separate words
**   REGEX(/t.?e/)        the terms a regular expression matches whole
**                        (Manticore's operator; PCRE2 syntax, which reads
**                        RE2's common forms alike): an FTSN_WILDCARD whose
**                        text is all of `REGEX(/…/)` (fts_match_is_regex),
**                        expanded and matched as a wildcard is; the
**                        delimiter is the byte after '(' and the pattern
**                        ends at its first occurrence followed by ')'; a
**                        pattern that does not compile is a syntax error
**                        at its offset
**   @title hello         field scope: the rest of the group matches in title
**   @(title,body) hello  several fields; `@*` goes back to all fields
**   @!title  @!(a,b)     every field but those
**   @title[50] hello     position limit (after any field operator but @*):
**                        only the first 50 positions of the field count,
**                        for every word of the scope (a phrase's words
**                        all within them); `@*` or another field
**                        operator ends it
**   ZONE:(h3,h4) hello   zone limit (Sphinx): the rest of the group's words
**   ZONE:h3 hello        count only inside spans of these zones (HTML
**                        elements of the table's index_zones), each word
**                        in any of them (a phrase's words each inside
**                        one); a field operator, another ZONE: or the
**                        group's end ends it, and a field operator keeps
**                        it out of its scope
**   ZONESPAN:(h2) a b    as ZONE:, and the scope's words (its implicit AND,
**                        and every AND inside it) match inside one span,
**                        a phrase's words too; ZONESPAN: starts an item
**                        of its group (not after '|', MAYBE or a chain
**                        operator)
**   @@relaxed            (first in the query) unknown field names are
**                        ignored instead of refused; the words of a scope
**                        that names no field of the table are left out
**                        (bMissed), as stop words are
**   title:hello          Lucene alias: field scope for one word or phrase
**   =running             exact form: the word as written, not stemmed
**                        ("=a =b" inside a phrase, ="a b" for all its
**                        words, also with ~N and /N); not on a prefix.
**                        The '=' stays in the word's raw text: the
**                        analyzer's query side reads it
**                        (analyzer_run_query); '\=' becomes a space there
**   ( … )                grouping; a group's field scope ends with it
**   \x                   a special character taken literally
** Words are runs of characters that are not whitespace or one of
**   ( ) | - ! @ " ~ * \ + :  (':' only after a field name; '$' only at
**   the end of a word, '<' only as `<<`).
** MAYBE, NEAR/N and the refused keywords
** are operators only in upper case, as in Sphinx; lower case they are
** words.
** The parser does not analyse words: it keeps their raw text; the planner
** runs them through the table's analyzer (so "e-mail" inside a word run
** is split there, and a word that analyses to several terms becomes a
** phrase).
**
** Contract. fts_match_parse() builds the tree in the caller's arena.
** Field names are resolved against the table's full-text fields (given in
** order); an unknown field is an error naming it. An empty query (only
** whitespace) gives *ppRoot = NULL: it matches every document. Errors are
** LP_BADINPUT with err->pos the byte offset in the MATCH text and a
** message `MATCH: near 'xyz' at offset 12: expected ...` (or `MATCH:
** unexpected end of query at offset N: expected ...`). Nesting is limited
** to FTS_MATCH_MAX_DEPTH, so no input overflows the stack.
*/
#ifndef LP_FTS_MATCH_H
#define LP_FTS_MATCH_H

#include <stdint.h>

#include "util/arena.h"
#include "util/error.h"

#define FTS_MATCH_MAX_DEPTH 100

typedef struct FtsFieldSet {
    uint64_t a[4];          /* bit i set: field i (up to 256 fields) */
} FtsFieldSet;

static inline int fts_fieldset_has(const FtsFieldSet *s, int i) {
    return (int)((s->a[i >> 6] >> (i & 63)) & 1);
}

/* A zone limit (ZONE:(h3,h4), ZONESPAN:(h2)): the words of its scope
** count only where they lie inside a span of one of the named zones
** (HTML elements the table's index_zones lists). */
typedef struct FtsZones {
    int pos;                    /* byte offset of ZONE: / ZONESPAN: in the query */
    int len;                    /* length of the operator with its names */
    int bSpan;                  /* ZONESPAN: also, see FtsNode.pSpan */
    int nName;
    const char *const *azName;  /* lower case, NUL-terminated */
} FtsZones;

typedef enum FtsNodeKind {
    FTSN_TERM,      /* z/n: one raw word (or, fts_match_join_words, the words of
                    ** a word form's or an exception's source) */
    FTSN_PREFIX,    /* z/n: the raw prefix, without the '*' */
    FTSN_PHRASE,    /* z/n: the raw text between the quotes; nSlop */
    FTSN_AND,       /* aChild[0..nChild): all (some may be FTSN_NOT); with pSpan,
                    ** the positive ones in one span */
    FTSN_OR,        /* aChild[0..nChild): any */
    FTSN_NOT,       /* aChild[0]: must not match; only as a child of AND */
    FTSN_MAYBE,     /* aChild[0] required, aChild[1] optional (scores only) */
    FTSN_QUORUM,    /* z/n: the raw text of the words; nQuorum or fQuorum */
    FTSN_BEFORE,    /* aChild[0..nChild): TERM/PHRASE operands, in order */
    FTSN_NEAR,      /* aChild[0..nChild) as BEFORE; aDist[k]: the distance
                    ** allowed between operands 0..k's span and k+1 */
    FTSN_SENTENCE,  /* aChild[0..nChild) as BEFORE, in one sentence, any order */
    FTSN_PARAGRAPH, /* aChild[0..nChild) as BEFORE, in one paragraph, any order */
    FTSN_WILDCARD,  /* z/n: a word with '*'s not only at its end ("*abc*", "ab*c"),
                    ** or with '?' or '%' (FTS_MATCH_INLINE_WILDCARDS): the raw
                    ** text, each run of '*'s one '*' (infix search) */
    FTSN_ORDER,     /* aChild[0..nChild): '<<' with an operand BEFORE cannot take
                    ** (a group, a prefix, ...): every child matches, and in one
                    ** field an occurrence of each comes after one of the
                    ** previous child's ends (Sphinx's ORDER node); OR lists of
                    ** words stay ORs, not expanded into chains */
    FTSN_NEAR_ANY,  /* aChild[0..nChild) and aDist as NEAR, with an operand a
                    ** chain of words cannot take (a proximity phrase, a '<<'
                    ** chain, a NEAR chain not first, a MAYBE or quorum holding
                    ** more than words, an OR list of these): every child
                    ** matches, and in one field their occurrences (each where
                    ** it matches, as FTSN_ORDER reads them) make a chain by
                    ** Sphinx's NEAR automaton; OR lists stay ORs */
} FtsNodeKind;

/* FtsNode.anchor bits: '^' and '$'. */
#define FTS_ANCHOR_START 1
#define FTS_ANCHOR_END 2

typedef struct FtsNode FtsNode;
struct FtsNode {
    FtsNodeKind kind;
    int pos;                /* byte offset of the node's text in the query */
    int len;                /* length of that text */
    FtsFieldSet fields;     /* TERM/PREFIX/PHRASE: fields it may match in */
    const char *z;          /* TERM/PREFIX/PHRASE: raw text, unescaped, NUL-terminated */
    int n;                  /* its length */
    int nSlop;              /* PHRASE: proximity window (~N); 0 = exact phrase */
    int bRequired;          /* TERM/PHRASE written with a leading '+' (informational) */
    int anchor;             /* TERM/PHRASE: FTS_ANCHOR_* bits (never with nSlop) */
    const uint8_t *aMark;   /* PHRASE/QUORUM: NULL, or per byte of z the anchor
                            ** written on one of its words, '^' or '$', where it
                            ** stood ('^' before the word, '$' after it; a blank
                            ** in z): that word's occurrences count only first /
                            ** last in a field. An exact phrase's '^' first and
                            ** '$' last are its anchor instead. A quorum's OR
                            ** groups: '(', '|' and ')' where they stand in z */
    double fBoost;          /* TERM written word^N: its idf times N; 0: none */
    int bExact;             /* PHRASE/QUORUM written ="...": every word is exact
                            ** (a TERM's '=word' keeps its '=' in z instead) */
    uint32_t nPosLimit;     /* TERM/PREFIX/PHRASE/QUORUM: only positions
                            ** 0..nPosLimit-1 of a field count (@f[N]); 0: all */
    const FtsZones *pZones; /* TERM/PREFIX/PHRASE/QUORUM/WILDCARD: only positions
                            ** inside these zones count; NULL: all */
    const FtsZones *pSpan;  /* AND (ZONESPAN): its positive children match inside
                            ** one span of these zones (each where its own
                            ** children do: ANDs inside intersect, ORs unite);
                            ** such an AND is not flattened into its parent */
    int nQuorum;            /* QUORUM: at least this many words (>= 1), or 0 ... */
    double fQuorum;         /* ... this fraction of them, in (0, 1] */
    int *aDist;             /* NEAR: nChild - 1 distances, each >= 1 */
    int bNotNear;           /* NEAR written NOTNEAR/N: two children, the first
                            ** where the second is not within aDist[0] */
    FtsNode **aChild;       /* AND/OR/NOT/MAYBE/BEFORE/NEAR/ORDER children */
    int nChild;
    int bMissed;            /* leaf in the scope of a field operator that, under
                            ** @@relaxed, named only fields the table lacks
                            ** (@missing): left out of the query as a stop word
                            ** is, as Sphinx and Manticore drop it; the walks
                            ** (fts_match_leaves) skip it */
    int bChoices;           /* OR: the chains one chain with OR lists stands for,
                            ** one per choice of an alternative from each list
                            ** (a << (b | c) is (a << b) | (a << c)) */
    uint64_t orOps;         /* BEFORE/NEAR/SENTENCE/PARAGRAPH, a child of a
                            ** bChoices OR: bit k set where operand k is one
                            ** alternative of an OR list of several; where that
                            ** alternative is only stop words, the choice is
                            ** left out, not the operand (unless every choice
                            ** is), as an OR leaves out a stop word */
};

/* Parses z[0..n) with the table's full-text field names azField[0..nField).
** LP_OK (*ppRoot may be NULL for an empty query), LP_BADINPUT, LP_NOMEM. */
int fts_match_parse(Arena *a, const char *z, size_t n, const char *const *azField, int nField,
                    FtsNode **ppRoot, LpError *err);

/* fts_match_parse_opts' flags. */
#define FTS_MATCH_INLINE_WILDCARDS 1 /* '?' and '%' in a word are wildcards (tables
                                     ** with min_infix_len, as Manticore's): see above */
#define FTS_MATCH_NOT_ONLY 2         /* a query of only negations ("-spam -ads") is
                                     ** allowed (Manticore's OPTION
                                     ** not_terms_only_allowed=1): it matches every
                                     ** document that holds none of them; else it is
                                     ** an error */
#define FTS_MATCH_EXACT_FORMS 4      /* every word is its exact form, as if written
                                     ** '=word' (and every phrase and quorum '="…"'):
                                     ** Manticore's OPTION morphology=none */

/* Is root (a parsed query) only negations: a NOT, or an AND of NOTs? Such
** a root comes only from FTS_MATCH_NOT_ONLY. */
int fts_match_is_negative(const FtsNode *root);

/* fts_match_parse with flags (FTS_MATCH_*). fts_match_parse is flags 0. */
int fts_match_parse_opts(Arena *a, const char *z, size_t n, const char *const *azField, int nField,
                         unsigned flags, FtsNode **ppRoot, LpError *err);

/* Splits each prefix and wildcard in which the analyzer reads several
** words ("e-ma*", "what's?", "*body-bag*") into an AND of its words: a
** word touching a wildcard character is a PREFIX (a trailing '*') or a
** WILDCARD, the others TERMs ("e AND ma*", as Manticore reads them).
** Only where any operand may stand (AND, OR, NOT, MAYBE, the root); in a
** chain (NEAR, '<<', ...) such a leaf stays, and the planner refuses it.
** LP_OK or LP_NOMEM. */
struct Analyzer;
int fts_match_split_words(Arena *a, FtsNode *root, const struct Analyzer *an, LpError *err);

/* Where the table has word forms or exceptions (text/analyzer.h), joins
** the bare words of an AND that one of their sources spans ("core 2 duo"
** written without quotes, with "core 2 duo > c2d"; AT & T, with the
** exception "AT & T => AT&T") into one TERM, whose text is those words as
** the query has them, so the query finds what the documents were indexed
** as, as in Manticore. Bare words are plain words one after the other in
** one scope, with only white space and punctuation that is no operator
** between them in the query text zQuery (the text parsed). LP_OK or
** LP_NOMEM. */
int fts_match_join_words(Arena *a, const char *zQuery, FtsNode *root, const struct Analyzer *an, LpError *err);

/* Calls xLeaf(ctx, leaf, bNegated) for every leaf of the tree (TERM,
** PREFIX, PHRASE, QUORUM), in query order; bNegated: the leaf is under a
** NOT. A non-zero return stops the walk and is returned; else LP_OK. The
** one place that knows which node kinds hold children. */
typedef int (*FtsLeafFn)(void *ctx, const FtsNode *leaf, int bNegated);
int fts_match_leaves(const FtsNode *root, FtsLeafFn xLeaf, void *ctx);

/* The same walk, also handing each leaf its ZONESPAN group: the nearest
** AND with pSpan above it, or NULL. */
typedef int (*FtsGroupLeafFn)(void *ctx, const FtsNode *leaf, int bNegated, const FtsNode *pGroup);
int fts_match_leaves_grouped(const FtsNode *root, FtsGroupLeafFn xLeaf, void *ctx);

/* Appends a canonical text form of the tree (for EXPLAIN and tests):
** AND(a, OR(b, c)), PHRASE("a b"~2)@{title}, PREFIX(hel*), NOT(x). */
struct StrBuf;
void fts_match_dump(const FtsNode *root, const char *const *azField, int nField,
                    struct StrBuf *sb);

/* Added with the parser (match.c). */

/* Is z[0..n) a REGEX operator's text, `REGEX(` + delimiter + pattern +
** delimiter + `)` (the text of an FTSN_WILDCARD that is one, and the
** pattern fts_wildcard_pattern gives for it)? Then its pattern is
** z[7 .. n - 2). No wildcard's own pattern is one: those are folded
** words, and 'REGEX(' is upper case. */
int fts_match_is_regex(const char *z, int n);

/* err->detail of a MATCH syntax error: MySQL's errno for a parse error. */
#define FTS_MATCH_ER_PARSE 1064
/* Largest N accepted in @field[N]. */
#define FTS_MATCH_MAX_POS_LIMIT 1000000000
/* Largest N accepted in "…"~N and NEAR/N. */
#define FTS_MATCH_MAX_SLOP 100000
/* Largest N accepted in word^N. */
#define FTS_MATCH_MAX_BOOST 1000
/* Most phrases a phrase's alternatives may make ("(a | b) (c | d)": 4). */
#define FTS_MATCH_MAX_PHRASES 256
/* Most words a quorum counts (as Sphinx: 256). */
#define FTS_MATCH_MAX_QUORUM 256
/* Longest zone name in ZONE:(…), in bytes (the index keeps no longer ones). */
#define FTS_MATCH_MAX_ZONE_NAME 32

/* The dump format, one node at a time:
**   word              TERM (the raw word; '\' before any of \ ( ) , { } " *
**                     and whitespace it holds)
**   PREFIX(hel*)      PREFIX
**   PHRASE("a b")     PHRASE, "~N" after the closing quote when nSlop > 0
**                     ('\' before '"' and '\' inside)
**   AND(x, y, ...)    OR(x, y, ...)    NOT(x)    MAYBE(x, y)
**   QUORUM("a b c"/2) QUORUM("a b c"/0.5)
**   BEFORE(x, y, ...) NEAR(x, /3, y, /4, z)
**   ^word  word$      anchors, on a word or a phrase (and inside a phrase's
**                     or quorum's text, on its words: PHRASE("a ^b c$"~3))
**   word^1.5          a boosted word (after its '$', before its fields)
**   EMPTY             the empty query (root NULL)
** A leaf whose field set is not every field is followed by its fields:
** `@{title,body}` in field order (a number for a field with no name), and
** a leaf with a position limit by `[N]` (after its fields, if shown), a
** leaf with a zone limit by `<h3,h4>` (after those; `<<h3,h4>>` for
** ZONESPAN), and an AND with pSpan is written SPAN(x, y, ...).
** The '+' of a required word is not shown: it changes nothing. */

#endif /* LP_FTS_MATCH_H */
