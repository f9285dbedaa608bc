/*
** analyzer.h — turns text into the terms the full-text index stores and
** queries look up. One analyzer per table; the index side and the query
** side use the same one, so a word is normalised identically on both.
**
** Contract.
**  - Input must be valid UTF-8: otherwise analyzer_run() fails with
**    LP_BADINPUT and err->pos / the message name the byte offset of the
**    first bad byte. Nothing is emitted for invalid input (the check runs
**    first), so a caller never indexes half a document.
**  - Words are maximal runs of letters (Unicode L*), digits (N*) and
**    combining marks (M*) attached to them. Every CJK ideograph (and
**    Hiragana/Katakana/Hangul syllable) is a word of its own. Everything
**    else separates words.
**  - Each word is normalised: NFKC, then Unicode case folding (utf8proc).
**    With remove_diacritics (bRemoveDiacritics), the marks on Latin and
**    Greek letters go too: "Café" → "cafe", "ΆΓΙΟΣ" → "αγιοσ", "Ærøskøbing"
**    → "æroskobing". Precisely: after the canonical and compatibility
**    decomposition and case folding, each combining mark (Unicode M*)
**    whose base letter (the last non-mark before it) is in a Latin or
**    Greek block is dropped, and the Latin letters with a stroke ø, ł, đ,
**    ħ, ŧ become o, l, d, h, t; what is left is composed again (NFC).
**    Other scripts keep their marks (Cyrillic й and ё, Devanagari vowel
**    signs), and so do the ligatures æ and œ and the dotless ı. It also
**    lets a word run through the invisible joiners SOFT HYPHEN, ZERO WIDTH
**    JOINER, WORD JOINER and ZERO WIDTH NO-BREAK SPACE, which its term
**    leaves out ("re<U+00AD>sume" is one word, "resume"); without it they
**    separate words, as every format character does.
**    Then, per the configuration, stop words and words of fewer than
**    min_word_len characters are dropped (their position is still
**    counted, so a phrase does not match across a removed word; with
**    bStopwordNoStep, bOvershortNoStep it is not: the next word takes it,
**    Manticore's stopword_step=0 and overshort_step=0) and the
**    Snowball stemmer of the language is applied (of several languages,
**    the first that changes the word; none to a word of fewer than
**    min_stemming_len characters). With bStopwordsStemmed on a stemmed
**    table (stopwords_unstemmed='0'), the stop words are stemmed when the
**    analyzer is built and a word is dropped where its stem is one of
**    them (min_word_len still looks at the word as written); its exact
**    form goes with it.
**  - Character table (charset_table, text/charset.h): where given, the
**    words are maximal runs of the characters it names and of those its
**    aliases take in (non_cjk: the letters, digits and marks above,
**    outside CJK; cjk: the CJK letters, each a word of its own, with its
**    marks); everything else separates words. A named character becomes
**    its target as is (no NFKC, no case folding); each run of the others
**    in a word is normalised as above. Without it, words are as with
**    "non_cjk, cjk". Refused: '.' as a target with index_sp, '<' with
**    index_zones (the index's own terms).
**  - N-gram characters (ngram_len 1 with ngram_chars): each is a word of
**    its own (with the marks after it), mapped where an item says; the
**    CJK aliases take in the letters the default makes one-letter words.
**    They come after blend characters and before charset_table.
**  - Blend characters (blend_chars, blend_mode): word characters and
**    separators at once. A token, a run of word and blend characters
**    holding a blend character, is in a document its parts (its words,
**    the blend characters read as separators, at their usual positions)
**    and, at the first part's position, each form blend_mode names (the
**    token, trimmed of its leading, trailing or all blend characters)
**    that differs from every part: "AT&T" is at&t@0 at@0 t@1. A dropped
**    first part still takes that position. A token of blend characters
**    only is one word (none with skip_pure). In a query (and in
**    analyzer_run_unstemmed) it is its first such form that is not
**    dropped (trim_none, trim_both, trim_head, trim_tail, trim_all), the
**    parts' positions passed over; where none is, its parts.
**  - Ignored characters (ignore_chars): before anything else, the
**    characters of the set are taken out of the text, so the letters
**    around one join ("e-mail" is "email" with '-' ignored, "и́" is "и"
**    with U+301); tokens keep the byte offsets of the text as given.
**  - Exceptions (zExceptions), in every run: where the text (after
**    ignored characters) has a rule's source, case for case, as whole
**    tokens (text/exceptions.h), that span is one token whose term is
**    the rule's destination as written ("C++" is cplusplus), at a
**    position of its own; no stop word, stemming, word form or exact form
**    touches it.
**  - Word forms (zWordforms; not in analyzer_run_unstemmed): before stop
**    words and stemming, a word or a run of consecutive words (positions
**    one apart) that is a rule's source is replaced by the rule's
**    destination words, which are neither dropped nor stemmed. The
**    longest source wins; sources do not overlap (read left to right).
**    The destination words take consecutive positions from the first
**    source word's, and the words after move up or down by the
**    difference (so "core 2 duo x" with "core 2 duo > c2d" gives c2d at 0
**    and x at 1); each has the byte offsets of the whole source run. A
**    rule written '~' is matched after stemming, against the stem, one
**    word for one. In a query, a word written right before a '*' (a
**    prefix) takes part in no rule.
**  - Positions count words from iPosBase (0, 1, 2, ...). Byte offsets
**    [iStart, iEnd) point into the ORIGINAL input, so highlighting can cut
**    the stored text exactly around a match.
**  - Terms are at most ANALYZER_MAX_TERM bytes; a longer word is cut at a
**    character boundary (still indexed, as its prefix).
**  - Exact forms (index_exact_words, with stemming only): a document's word
**    is also indexed, at the same position, as ANALYZER_EXACT_MARK followed
**    by its normalised, unstemmed form ("=running" beside "run"), so the
**    query '=running' finds that form only. No word's term starts with the
**    mark ('=' separates words), so the two never collide; prefixes and
**    wildcards expand over one kind only (analyzer_has_exact_forms). Stop
**    words get neither.
**  - Sentence and paragraph boundaries (index_sp, documents only): where a
**    sentence or a paragraph ends and another word follows, the boundary
**    takes a position of its own, as in Sphinx, and is indexed there as the
**    term ANALYZER_SENTENCE or ANALYZER_PARAGRAPH (a paragraph's end is
**    not also a sentence's), with the terminator's byte offsets. '.' is not
**    a word character, so no word's term is either. Sentences end at '?',
**    '!', the CJK '。', '！', '？', and at '.' except (Sphinx's rules) where
**    a letter or digit follows it ("S.p.A.", "3.14"), a comma follows it,
**    a space and a lower-case letter follow it ("Corp. announced"), or it
**    ends a one-letter capital word between spaces ("John D. Doe").
**    Paragraphs end at a blank line (two line breaks with only spaces,
**    tabs or '\r' between them) and at U+2029 (html_strip turns Sphinx's
**    block-level tags into blank lines: analyzer_doc_text).
**  - Phrase boundaries (phrase_boundary, documents only): a character of
**    the list, followed by a separator (not by a word's character: "x,y"
**    is no boundary, "x, y" is; "S.T.A.L.K.E.R" has none), between two
**    words adds phrase_boundary_step to the next word's position, once
**    for all the boundaries between the two, so words of different
**    phrases are more than that far apart and a proximity search within
**    it stays inside a phrase (Manticore's). The characters must be
**    separators: a character that is a word's (charset_table), a blend
**    character or an ignored one is an error. Queries are read without
**    them (a query's words are not spread, as in Manticore). The steps
**    are positions, not words: a field's length leaves them out
**    (analyzer_run's *piPosEnd).
**  - Zones (index_zones, with html_strip; analyzer_run_doc only): a zone is
**    an element the option lists ("h*, th, title": a name, or a prefix
**    ending in '*'), a span one instance of it, from its opening tag to
**    its closing tag (tags paired per name, nested ones innermost first; an
**    opening tag never closed ends at the end of the field). A span that
**    holds words is indexed as two terms: '<' + the element's lower-cased
**    name at the position of its first word and "</" + the name at its
**    last's. They take no position of their own, so phrases, lengths and
**    BM25 do not see them. Spans of one name that overlap or nest are
**    indexed as one (their union), so each term's positions pair up in
**    order: the k-th '<h3' and the k-th '</h3' bound the k-th span. '<' is
**    not a word character, so no word's term starts with it. Names longer
**    than ANALYZER_ZONE_NAME_MAX bytes are not zones.
**
** Thread safety: an Analyzer is immutable after analyzer_new() and may be
** used from any number of threads at once (stemmers are per thread inside).
*/
#ifndef LP_TEXT_ANALYZER_H
#define LP_TEXT_ANALYZER_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"
#include "util/strbuf.h"
#include "util/vec.h"

#define ANALYZER_MAX_TERM 64

typedef struct AnalyzerConfig {
    const char *zMorphology;    /* NULL/"none", or "stem_<lang>": stem_en, stem_ru, ...; or
                                ** several, "stem_en, stem_ru" (stem_enru is those two):
                                ** a word goes through them in order until one changes
                                ** it; at most ANALYZER_MAX_STEMMERS */
    const char *zStopwords;     /* NULL/"none", or language codes, "en" or "de, en": the
                                ** union of their Snowball stop-word lists */
    int minPrefixLen;           /* shortest prefix a prefix query may use (0 = 1) */
    int bExactWords;            /* index_exact_words: index exact forms too */
    int bIndexSp;               /* index_sp: index sentence and paragraph boundaries */
    int bHtmlStrip;             /* html_strip: documents are HTML (analyzer_doc_text) */
    const char *zHtmlRemove;    /* html_remove_elements: "script, style"; NULL: none */
    int minInfixLen;            /* min_infix_len: shortest literal part of a wildcard
                                ** query ("*abc*"); 0: wildcard queries refused */
    const char *zHtmlIndexAttrs;/* html_index_attrs: "img=alt,title; a=title"; NULL: none */
    int minWordLen;             /* min_word_len: shorter words are not indexed nor
                                ** searched (as stop words); 0 or 1: every word */
    const char *zIndexZones;    /* index_zones: "h*, th, title" (needs bHtmlStrip);
                                ** NULL: no zones */
    int bRemoveDiacritics;      /* remove_diacritics: "café" is "cafe" (above) */
    int minStemmingLen;         /* min_stemming_len: words of fewer characters are not
                                ** stemmed; 0 or 1: every word */
    const char *zWordforms;     /* wordforms rules (text/wordforms.h: "walks > walk;
                                ** core 2 duo > c2d; ~run > walk"); NULL: none */
    const char *zIgnoreChars;   /* ignore_chars: "U+AD, -" (text/charset.h); NULL: none */
    const char *zExceptions;    /* exceptions rules (text/exceptions.h: "C++ => cplusplus;
                                ** AT & T => at&t"); NULL: none */
    const char *zStopwordsList; /* stopwords_list: the table's own stop words, a text split
                                ** into words as documents are ("a; the"); NULL: none */
    int bStopwordNoStep;        /* stopword_step='0': a stop word takes no position */
    int bOvershortNoStep;       /* overshort_step='0': nor does a word under min_word_len */
    const char *zCharsetTable;  /* charset_table: "non_cjk, +, #" (text/charset.h); NULL:
                                ** the default, as "non_cjk, cjk" */
    const char *zBlendChars;    /* blend_chars: "&, @->_" (text/charset.h); NULL: none */
    const char *zBlendMode;     /* blend_mode: "trim_none, trim_head, trim_tail, trim_both,
                                ** trim_all, skip_pure" (a list); NULL: trim_none */
    int bStopwordsStemmed;      /* stopwords_unstemmed='0': stop words are stemmed, and a
                                ** word is dropped where its stem is one of them */
    int nNgramLen;              /* ngram_len: 0, or 1 (ngram_chars are words of one
                                ** character) */
    const char *zNgramChars;    /* ngram_chars: "cont, U+3000..U+2FA1F" (text/charset.h);
                                ** NULL: none */
    const char *zRegexpFilter;  /* regexp_filter: replacement rules, one per line
                                ** (text/regexp.h: "(BLUE|RED) => COLOR"); NULL: none */
    const char *zPhraseBoundary;/* phrase_boundary: ".,?,!,U+2026" (text/charset.h);
                                ** NULL: none */
    int phraseBoundaryStep;     /* phrase_boundary_step: positions a document's phrase
                                ** boundary adds, 0..ANALYZER_MAX_PHRASE_STEP */
} AnalyzerConfig;

#define ANALYZER_MAX_PHRASE_STEP 1000

#define ANALYZER_MAX_STEMMERS 4

#define ANALYZER_EXACT_MARK '='  /* first byte of an exact form's term */
#define ANALYZER_SENTENCE "."    /* the term of a sentence boundary (index_sp) */
#define ANALYZER_PARAGRAPH ".."  /* the term of a paragraph boundary (index_sp) */
#define ANALYZER_ZONE_MARK '<'   /* first byte of a zone's terms (index_zones) */
#define ANALYZER_ZONE_NAME_MAX 32 /* longest zone name indexed, in bytes */

typedef struct Analyzer Analyzer; /* opaque */

/* The part of cfg that decides how text is split into words and folded
** (remove_diacritics, ignore_chars, charset_table, blend_chars,
** blend_mode, ngram_len, ngram_chars), everything else off: what rules
** (word forms, exceptions, stop-word lists) are checked with, as the
** table's analyzer will split them, before the table exists. */
AnalyzerConfig analyzer_split_config(const AnalyzerConfig *cfg);

/* Creates an analyzer. LP_BADINPUT for an unknown morphology or stop-word
** list (the message lists the supported ones), for html_remove_elements
** that is not a list of element names, LP_NOMEM. */
int analyzer_new(const AnalyzerConfig *cfg, Analyzer **ppOut, LpError *err);
void analyzer_free(Analyzer *a);

typedef struct Token {
    const char *z;      /* the term: normalised (and stemmed) bytes, valid during the callback */
    int n;              /* its length in bytes (1..ANALYZER_MAX_TERM) */
    uint32_t iPos;      /* word position */
    uint32_t iStart;    /* byte offset of the word in the input */
    uint32_t iEnd;      /* byte offset just past it */
} Token;

/* Called for each term; a non-zero return stops the run and is returned. */
typedef int (*TokenFn)(void *ctx, const Token *t);

/* Analyses a document's text z[0..n) into the terms it is indexed under:
** each word's term and, with exact forms on, its exact form first (same
** position and offsets). *piPosEnd (may be NULL) receives the position
** after the last word less the phrase boundaries' steps: the text's
** length in positions (a caller continuing the numbering, as for
** multi-valued fields, adds the steps it wants between the values). */
int analyzer_run(const Analyzer *a, const char *z, size_t n, uint32_t iPosBase, TokenFn xToken,
                 void *ctx, uint32_t *piPosEnd, LpError *err);

/* Analyses a document field's stored text z[0..n) as the index stores
** it: analyzer_doc_text's text run through analyzer_run (the same tokens,
** offsets into that text) and, with index_zones, each zone span's two
** terms after the words (offsets: where the span starts and ends). */
int analyzer_run_doc(const Analyzer *a, const char *z, size_t n, uint32_t iPosBase, TokenFn xToken,
                     void *ctx, uint32_t *piPosEnd, LpError *err);

/* Analyses a query's text z[0..n) into the terms it looks up: as
** analyzer_run without exact forms, except that a word written right after
** an '=' that does not follow a letter or digit ('=running', "=a b"), or
** every word when bAllExact (the query's ="a b"), is looked up by its
** exact form alone. With stemming and exact forms off, such a word is
** LP_BADINPUT (err->pos: the '=', or the word), as no index holds it;
** without stemming the word is its own exact form. A '*' that does not
** end a word takes a position ("a * b": b at 2), the query language's
** any-word place in a phrase. */
int analyzer_run_query(const Analyzer *a, const char *z, size_t n, int bAllExact, TokenFn xToken,
                       void *ctx, LpError *err);

/* As analyzer_run, without stop words and stemming: for prefix queries
** (`pre*` matches terms that start with the normalised prefix) and for
** checking a word in the query language. */
int analyzer_run_unstemmed(const Analyzer *a, const char *z, size_t n, TokenFn xToken, void *ctx,
                           LpError *err);

/* A run's tokens, kept: after analyzer_collect, a.a[i].z points into buf
** (each term followed by a NUL), valid until token_list_free. */
typedef struct TokenList {
    VEC(Token) a;
    StrBuf buf;
} TokenList;

/* How analyzer_collect analyses. */
#define ANALYZE_UNSTEMMED 0   /* analyzer_run_unstemmed */
#define ANALYZE_QUERY 1       /* analyzer_run_query */
#define ANALYZE_QUERY_EXACT 2 /* analyzer_run_query, every word exact */

/* Fills the empty *l with the tokens of z[0..n), analysed as mode
** (ANALYZE_*) says. LP_OK, LP_NOMEM, or the analyzer's error
** (err->pos in z). *l is freed by token_list_free either way. */
int analyzer_collect(const Analyzer *a, const char *z, size_t n, int mode, TokenList *l,
                     LpError *err);
void token_list_free(TokenList *l);

/* The positions a query's text z[0..n) takes, analysed as mode
** (ANALYZE_QUERY or ANALYZE_QUERY_EXACT) says, into *pnPos: one per word,
** stop word or '*' place, a blend token's parts each one ("at&t" is 2,
** as documents index it). LP_OK or the analyzer's error. */
int analyzer_query_span(const Analyzer *a, const char *z, size_t n, int mode, uint32_t *pnPos, LpError *err);

/* The text of a document's field as the index (and the highlighter) reads
** it: with html_strip, z[0..n) with its markup stripped (text/html.h),
** then with regexp_filter, the rules applied (text/regexp.h); into buf,
** else z itself; in *pz, *pn. Invalid UTF-8 is refused first, as
** analyzer_run refuses it (err->pos in z), so markup never hides it.
** LP_OK, LP_BADINPUT, LP_NOMEM, LP_LIMIT (a rule stopped on the text);
** buf is the caller's to free either way. */
int analyzer_doc_text(const Analyzer *a, const char *z, size_t n, StrBuf *buf, const char **pz,
                      size_t *pn, LpError *err);

/* As analyzer_doc_text, with the markup stripped when bHtml says so,
** whatever the table's html_strip (HIGHLIGHT()'s html_strip_mode), and
** the regexp_filter rules applied only when bRules says so (the
** highlighter applies them itself, analyzer_rules_map). aMap (NULL:
** none), only with bHtml, and with !bRules where the table has rules
** (LP_BADINPUT otherwise), has room for 2 * n entries: output byte i came
** from input bytes [aMap[2i], aMap[2i + 1]) (text/html.h, html_strip_map). */
int analyzer_doc_text_as(const Analyzer *a, int bHtml, int bRules, const char *z, size_t n, StrBuf *buf,
                         const char **pz, size_t *pn, uint32_t *aMap, LpError *err);

/* The table's regexp_filter rules over a document's text z[0..n), with
** where each byte of the result came from (text/regexp.h,
** regexp_filter_apply_map): *paMap NULL when no rule matched (or the
** table has none) and the result is z. */
int analyzer_rules_map(const Analyzer *a, const char *z, size_t n, StrBuf *buf, const char **pz, size_t *pn,
                       uint32_t **paMap, LpError *err);

/* The text of a query (a MATCH, a snippet's query, CALL KEYWORDS' text) as
** the table reads it: with regexp_filter, the rules applied to the whole
** text before it is parsed (as Manticore applies them), into buf; else z
** itself. LP_OK, LP_BADINPUT (invalid UTF-8), LP_NOMEM, LP_LIMIT. */
int analyzer_query_text(const Analyzer *a, const char *z, size_t n, StrBuf *buf, const char **pz, size_t *pn,
                        LpError *err);
/* Does the table have regexp_filter rules? */
int analyzer_has_regexp(const Analyzer *a);

/* The configuration as given (for SHOW CREATE TABLE / explain). */
int analyzer_min_prefix_len(const Analyzer *a);
int analyzer_min_infix_len(const Analyzer *a);
/* May the normalised prefix z[0..n) be searched (at least min_prefix_len
** characters, and not empty)? */
int analyzer_prefix_ok(const Analyzer *a, const char *z, int n);
int analyzer_is_stemmed(const Analyzer *a);
/* Does the table have word forms? Then, as with stemming, a word's term
** can differ from the word (analyzer_run_unstemmed). */
int analyzer_has_wordforms(const Analyzer *a);
/* Do the terms of a text take other positions than its words
** (analyzer_run_unstemmed numbers every word): word forms, or a dropped
** word that takes no position (stopword_step or overshort_step 0)? */
int analyzer_renumbers(const Analyzer *a);

/* Has the analyzer blend characters (blend_chars)? A document's blend
** token then gives several terms inside one word as written: its forms
** and its parts. */
int analyzer_has_blend(const Analyzer *a);
/* Does the table have exceptions (a token may span several words)? */
int analyzer_has_exceptions(const Analyzer *a);
int analyzer_exact_words(const Analyzer *a);
/* Do documents get exact forms ('=running' beside 'run'): index_exact_words
** on a stemmed table? Then prefixes and wildcards expand over the exact
** forms, as Sphinx's and Manticore's do, so 'runn*' finds "running" though
** no stem starts with "runn". */
int analyzer_has_exact_forms(const Analyzer *a);
/* Is the normalised (unstemmed) word z[0..n) indexed: not a stop word and
** not under min_word_len? (analyzer_run_unstemmed lists every word.) */
int analyzer_word_indexed(const Analyzer *a, const char *z, int n);
int analyzer_html_strip(const Analyzer *a);
/* Does the table index sentence and paragraph boundaries (index_sp)? */
int analyzer_index_sp(const Analyzer *a);
/* Has the table phrase boundaries (phrase_boundary)? Their step? Is the
** gap z[from..to) between two words of a text one (a boundary character
** there, followed by a separator)? */
int analyzer_has_phrase_boundary(const Analyzer *a);
int analyzer_phrase_boundary_step(const Analyzer *a);
int analyzer_gap_is_phrase_boundary(const Analyzer *a, const char *z, size_t from, size_t to);
/* Does the table index zones (index_zones)? Is the lower-case element name
** z[0..n) one of them? */
int analyzer_has_zones(const Analyzer *a);
int analyzer_zone_indexed(const Analyzer *a, const char *z, size_t n);

#endif /* LP_TEXT_ANALYZER_H */
