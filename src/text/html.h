/*
** html.h — HTML markup stripped from a document's text before analysis
** (the table option html_strip, as Manticore's).
**
** Contract of html_strip():
**  - A tag is '<' then a letter, or '/' and a letter, up to the next '>'
**    outside quotes ('"' or '\''); a comment is '<!--' up to '-->'; a
**    declaration or processing instruction is '<!' or '<?' up to '>'. A
**    '<' that starts none of these, or whose end never comes, is text.
**  - A tag of the inline elements (A B I S U BASEFONT BIG EM FONT IMG
**    LABEL SMALL SPAN STRIKE STRONG SUB SUP TT, Sphinx's list) leaves
**    nothing, so "te<b>st</b>" is the word "test". A tag of a block-level
**    element (ADDRESS BLOCKQUOTE CAPTION CENTER DD DIV DL DT H1..H6 LI
**    MENU OL P PRE TABLE TBODY TD TFOOT TH THEAD TR UL) leaves a blank
**    line, "\n\n" (a paragraph's end with index_sp, white space otherwise,
**    and a line break where HIGHLIGHT() shows the text). Any other tag, a
**    comment or a declaration leaves a space.
**  - An element named in azRemove (ASCII case-insensitive: "script",
**    "style") is removed with its content, up to its closing tag (or the
**    end of the text), leaving a space.
**  - Character references are decoded: the 252 named ones of HTML 4
**    ("&eacute;", with the ';') and numeric ones ("&#233;", "&#xE9;") of a
**    code point that UTF-8 can hold (not a surrogate; 0 becomes U+FFFD).
**    Anything else after '&' is text.
**  - Everything else is copied byte for byte, so valid UTF-8 stays valid:
**    markup is ASCII and is removed whole.
** The output is appended to out and is never longer than the input: a tag
** is at least three bytes ("<p>") and leaves at most two, plus a space and
** the value for each attribute kept (whose name and '=' are at least two
** bytes) and a space after them all, a reference at least four ("&lt;")
** and leaves at most four.
*/
#ifndef LP_TEXT_HTML_H
#define LP_TEXT_HTML_H

#include <stddef.h>
#include <stdint.h>

#include "util/strbuf.h"

/* Appends z[0..n) with its markup stripped to out (check out->oom).
** azRemove: NULL, or a NULL-terminated list of element names. azAttr:
** NULL, or NULL-terminated pairs of names, element then attribute
** ("img", "alt", "img", "title", NULL: html_index_attrs): the values of
** those attributes in an opening tag are kept as text, each after a space
** (references decoded), after what the tag leaves, and a space after them,
** so a value is never joined to a word. */
void html_strip(const char *z, size_t n, const char *const *azRemove, const char *const *azAttr,
                StrBuf *out);

/* Zones (index_zones): the tags of listed elements, reported as they are
** met. azZone: NULL-terminated names, or prefixes ending in '*' ("h*":
** h1..h6, hr, ...), matched in any case. xZone is called for each opening
** and closing tag of such an element (not for a self-closing "<x/>", nor
** inside a removed element) with its name as written and iOut, the
** length of the output before what the tag leaves: the zone's text starts
** (bClose 0) or ends (bClose 1) there. Opening and closing tags are not
** paired here: the caller does that. */
typedef struct HtmlZones {
    const char *const *azZone;
    void (*xZone)(void *ctx, const char *zName, size_t nName, size_t iOut, int bClose);
    void *ctx;
} HtmlZones;

/* html_strip, reporting zones to pZones (NULL: none). */
void html_strip_zones(const char *z, size_t n, const char *const *azRemove,
                      const char *const *azAttr, const HtmlZones *pZones, StrBuf *out);

/* html_strip, recording where each output byte came from: aMap (NULL:
** nothing recorded; else room for 2 * n entries, n < 4 GiB) gets, for
** output byte i, the input bytes [aMap[2i], aMap[2i + 1]) of what produced
** it: the byte itself for text, the whole reference for a decoded
** character reference, the whole tag (comment, removed element) for what
** markup leaves, kept attribute values included. So a span of output text
** maps back to the stored bytes it was read from (HIGHLIGHT()'s
** html_strip_mode='retain'). */
void html_strip_map(const char *z, size_t n, const char *const *azRemove, const char *const *azAttr,
                    uint32_t *aMap, StrBuf *out);

#endif /* LP_TEXT_HTML_H */
