/*
** highlight.h — HIGHLIGHT() / SNIPPET(): a field's stored text with the
** query's matches wrapped in tags, cut to passages around the matches
** when it is long (Manticore's highlighting, the options it names).
**
** Model. fts_hl_query_build() turns a parsed MATCH tree into the terms
** to look for in one field, once per query: every TERM and every word of
** a PHRASE is run through the table's analyzer (so a query word matches
** its stem: "running" marks "runs"), and every PREFIX's text through
** analyzer_run_unstemmed (a text word is marked when its normalised,
** unstemmed form starts with it). Leaves under a NOT are never marked, nor
** leaves whose field scope excludes the field. fts_highlight() then
** analyses the text the same way and marks each word whose term is one of
** those (words are compared, not phrases: each word of a phrase is marked
** wherever it occurs, as Manticore does with exact_phrase off; with it on,
** the words of an exact phrase of words are marked where it matches, its
** words found in the text at their places after its first). A word
** under ZONE: is marked only inside a span of its zones; under a
** ZONESPAN: group, only inside a span (of its zones, overlapping ones
** joined) where the whole group holds, words compared as above.
**
** Output. The original bytes of the text (never normalised), with
** before_match/after_match around each marked word: one tag pair per word,
** even for adjacent words, as Manticore does. In either tag %PASSAGE_ID%
** (or Manticore's newer name %SNIPPET_ID%) is the match's number in the
** output: start_passage_id for the first marked word shown, one more for
** each after it (Sphinx counts so). The text is not HTML-escaped
** unless bEscapeHtml asks (a loupe option; tags and separators are never
** escaped). Cutting:
**   1. A text within the limits (at most `limit` characters, code points,
**      and at most `limit_words` words; 0 is no limit) is shown whole,
**      unless force_passages asks for passages anyway.
**   2. Otherwise passages: `around` words on each side of a marked word;
**      windows that touch are merged while they fit in the limits.
**      Passages are chosen best first (most query terms not shown yet,
**      then most distinct terms, then most marked words, then earliest)
**      until the characters shown reach `limit` (tags and separators do
**      not count), the words shown reach `limit_words`, or
**      `limit_passages` are chosen; a passage too long for what is left
**      is shrunk around its first new match, word by word. They are output
**      in text order (weight_order: in the order chosen), overlapping or
**      touching ones merged, with chunk_separator between passages and at
**      either end where text was left out.
**   3. No marked word: the start of the text, cut after the last whole
**      word within `limit` characters and `limit_words` words (inside the
**      first word if even that one is longer than `limit`), followed by
**      chunk_separator; or "" with allow_empty.
** force_all_words takes a passage that adds a query term not shown yet
** even past `limit`. A cut never splits a UTF-8 character.
**
** Boundaries (passage_boundary, Manticore's snippet_boundary). With
** 'sentence' or 'paragraph' (tables with index_sp) or 'zone' (tables with
** index_zones) a passage never crosses a boundary of that kind: a
** sentence's or paragraph's end (a sentence's passage: a paragraph's end
** too), or the start or end of a zone span. Windows are clipped to their
** part of the text and only merged within it; a passage that ends a
** sentence ends after its terminator. As in Sphinx, a text with a
** boundary set is always cut to passages when a word is marked.
** use_boundaries: a passage never crosses a phrase boundary either (the
** table's phrase_boundary characters, followed by a separator), and ends
** after it; unlike passage_boundary it does not force passages.
** emit_zones (with passage_boundary 'zone' only, as in Sphinx) writes
** "<name>" of the innermost zone span holding a passage's first word
** before the passage.
**
** regexp_filter. A table's rules rewrite the text before it is read, as
** they do when it is indexed; what is shown is the text before them, each
** byte of what they wrote traced back to the match it replaced (text/
** regexp.h, regexp_filter_apply_map): a marked word a replacement wrote
** is shown as the whole text that replacement replaced, and other words
** it wrote (inside the same tags) get no tags of their own. The limits
** count characters and words of the text read.
**
** Markup (html_strip_mode). 'index': read as the table reads documents
** (markup stripped with html_strip); 'none': never stripped, the markup is
** text and shown as such (no zones then); 'strip': always stripped. In
** these three the text shown is the text read. 'retain': read stripped but
** shown as stored, markup kept, each marked word's stored bytes wrapped in
** tags (one pair per run of them between markup, so that tags nest; words
** read from attribute values are not marked). It needs no limits, no
** passage_boundary and no force_passages, as it shows the whole text, nor
** escape_html.
**
** Ownership and errors. The FtsHlQuery lives in the caller's arena and is
** read-only afterwards: any number of threads may highlight with it at
** once. fts_highlight() appends to *out and allocates only temporary
** memory. Errors: LP_BADINPUT (invalid UTF-8 in the text or the query
** words: err->pos is the byte offset; a negative option), LP_NOMEM, and
** whatever the analyzer returns.
*/
#ifndef LP_FTS_HIGHLIGHT_H
#define LP_FTS_HIGHLIGHT_H

#include <stddef.h>
#include <stdint.h>

#include "fts/match.h"
#include "text/analyzer.h"
#include "util/arena.h"
#include "util/error.h"
#include "util/strbuf.h"

typedef struct FtsHlOptions {
    const char *zBefore;   /* before_match: inserted before a marked word ("<b>") */
    const char *zAfter;    /* after_match: inserted after it ("</b>") */
    const char *zChunkSep; /* chunk_separator: where text was left out (" ... ") */
    int limit;             /* limit: characters of text shown, 0 = no limit (256) */
    int around;            /* around: words of context on each side of a match (5) */
    int limitPassages;     /* limit_passages: most passages, 0 = no limit (0) */
    int bAllowEmpty;       /* allow_empty: "" instead of the text's start when nothing matches */
    int bForceAllWords;    /* force_all_words: exceed limit until every term is shown */
    int bWeightOrder;      /* weight_order: passages best first instead of in text order */
    int bEscapeHtml;       /* escape & < > " ' in the text (loupe's own option) */
    int bExactPhrase;      /* exact_phrase: an exact phrase's words only where it
                           ** matches (read by fts_hl_query_build) */
    int limitWords;        /* limit_words: words of text shown, 0 = no limit (0) */
    int startPassageId;    /* start_passage_id: the first match's %PASSAGE_ID% (1) */
    int bForcePassages;    /* force_passages: cut to passages even when the whole
                           ** text is within the limits (0) */
    int boundary;          /* passage_boundary (snippet_boundary): FTS_HL_BOUNDARY_* (none) */
    int bEmitZones;        /* emit_zones: "<zone>" before each passage (0) */
    int htmlMode;          /* html_strip_mode: FTS_HL_HTML_* (index) */
    int bUseBoundaries;    /* use_boundaries: passages never cross a phrase boundary
                           ** (tables with phrase_boundary) (0) */
    int bWholeWords;       /* never cut inside a word: what does not fit is left out,
                           ** even the text's start (fts_highlight_shared sets it
                           ** for every text after the first shown) */
} FtsHlOptions;

/* passage_boundary: passages never cross one of these. */
#define FTS_HL_BOUNDARY_NONE 0
#define FTS_HL_BOUNDARY_SENTENCE 1  /* a sentence's or a paragraph's end (index_sp) */
#define FTS_HL_BOUNDARY_PARAGRAPH 2 /* a paragraph's end (index_sp) */
#define FTS_HL_BOUNDARY_ZONE 3      /* a zone span's start or end (index_zones) */

/* html_strip_mode: how the stored text's markup is read and shown. */
#define FTS_HL_HTML_INDEX 0  /* as the table's html_strip says */
#define FTS_HL_HTML_NONE 1   /* never stripped: markup is text */
#define FTS_HL_HTML_STRIP 2  /* always stripped */
#define FTS_HL_HTML_RETAIN 3 /* read stripped, shown with its markup, which is
                             ** never marked (the whole text only: no limits) */

/* What one fts_highlight() call showed: the budget a caller spends when
** several texts share one set of limits (limits_per_field=0). */
typedef struct FtsHlStats {
    int nMarked;     /* marked words written (%PASSAGE_ID% goes on from here) */
    int64_t nChars;  /* characters of text shown (tags and separators not counted) */
    int64_t nWords;  /* words shown */
    int nPassages;   /* passages shown (the whole text, or its start, is one) */
} FtsHlStats;

typedef struct FtsHlQuery FtsHlQuery; /* opaque; lives in the arena it was built in */

/* Fills *o with the defaults above. */
void fts_hl_options_init(FtsHlOptions *o);

/* Can o be honoured for texts of a table with analyzer an, for query q
** (NULL: any)? LP_OK, or LP_BADINPUT saying which option conflicts with
** what: a negative number; passage_boundary sentence or paragraph without
** index_sp; use_boundaries without phrase_boundary; a passage_boundary
** with around 0 or with use_boundaries (Manticore refuses both); zone, or emit_zones, without index_zones or with
** html_strip_mode none; emit_zones without passage_boundary zone (as
** Sphinx); html_strip_mode none with a query's zone limits; retain with a
** limit, force_passages, a passage_boundary or escape_html.
** fts_highlight() checks it too; a caller binding a statement
** checks first, so that the statement fails rather than its rows. */
int fts_hl_options_check(const FtsHlOptions *o, const Analyzer *an, const FtsHlQuery *q, LpError *err);


/* The terms to mark in field iField (the table's TEXT fields in
** declaration order, as in the MATCH tree's field sets), or in any field
** when iField is -1 (SNIPPET over an arbitrary text ignores scopes). root
** may be NULL (the empty query: nothing to mark). expand: the query's
** FTS_EXPAND_* bits (expand_keywords), so the words its star part finds
** are marked too (its exact part finds nothing the words' stems do not).
** bExactPhrase (the exact_phrase option): the words of an exact phrase of
** words only are marked only where the phrase matches in the text.
** LP_OK, LP_NOMEM, or the analyzer's error for a query word. */
int fts_hl_query_build(Arena *a, const Analyzer *an, const FtsNode *root, int iField, int expand,
                       int bExactPhrase, FtsHlQuery **pp, LpError *err);

/* Appends the highlighted text z[0..n) to *out (see the top of this file).
** opt NULL means the defaults. *pStats (pStats may be NULL) is set to what
** was shown, so that a caller highlighting several texts into one result
** can go on numbering the marks (start_passage_id) and share the limits.
** On failure *out may hold part of the result (the caller discards it). */
int fts_highlight(const Analyzer *an, const FtsHlQuery *q, const char *zText, size_t nText,
                  const FtsHlOptions *opt, StrBuf *out, LpError *err, FtsHlStats *pStats);

/* Highlights nText texts that share one set of limits (limits_per_field=0:
** a row's fields, in the order shown), each with its query apQ[i], into
** aOut[i] (appended to), as Manticore does: when all of them together are
** within the limits, each is shown whole; otherwise the passages of every
** text compete for `limit`, `limit_words` and `limit_passages` (best
** first, as in one text, a term shown in one text no longer new in
** another; a tie goes to the earlier text), and a text none of whose
** passages is chosen shows nothing. Only the first passage chosen may cut
** inside a word. When no text has a marked word, each text's start is
** shown (whole where it fits) within what the texts before it left, each
** a passage. %PASSAGE_ID% numbers on from one text to the next.
** aStats[i] (may be NULL) receives what text i showed. Errors as
** fts_highlight's, for the row as a whole. */
int fts_highlight_shared(const Analyzer *an, const FtsHlQuery *const *apQ, const char *const *azText,
                         const size_t *anText, int nText, const FtsHlOptions *opt, StrBuf *aOut, LpError *err,
                         FtsHlStats *aStats);

#endif /* LP_FTS_HIGHLIGHT_H */
