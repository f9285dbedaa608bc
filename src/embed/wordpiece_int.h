/*
** wordpiece_int.h — internals of the WordPiece tokenizer shared with its
** tests (tests/unit/test_embed_wordpiece.c, tests/fuzz/fuzz_wordpiece.c).
** Not part of the embed API: callers use wordpiece.h.
*/
#ifndef LP_EMBED_WORDPIECE_INT_H
#define LP_EMBED_WORDPIECE_INT_H

#include <stddef.h>
#include <stdint.h>

#include "embed/wordpiece.h"

/* The longest word (in characters) a tokenizer may ask to buffer, that is
** the largest max_input_chars_per_word wp_open accepts. The word buffers of
** wp_encode live on the stack and are sized by it (about 10 KB). */
#define WP_WORD_MAX 1024

/* As wp_encode, but nMax is only clamped from below (to 2): the tests use
** it to compare whole encodings of long texts with the reference, which
** wp_encode's WP_MAX_LEN cap would cut. aId has room for nMax ids. */
int wp_encode_nolimit(const Wordpiece *wp, const char *z, size_t n, int nMax, int64_t *aId);

/* The id of the vocabulary entry whose bytes are exactly z[0..n), or -1.
** bCont looks up the continuation form (the "##" prefix plus z). */
int64_t wp_lookup(const Wordpiece *wp, int bCont, const char *z, size_t n);

/* The effective configuration, for tests: the normaliser flags (after the
** strip_accents default is applied) and max_input_chars_per_word. */
typedef struct WpConfig {
    int bCleanText;    /* BertNormalizer.clean_text */
    int bChinese;      /* BertNormalizer.handle_chinese_chars */
    int bStripAccents; /* strip_accents, null resolved to lowercase */
    int bLowercase;    /* BertNormalizer.lowercase */
    int nMaxWordChars; /* WordPiece.max_input_chars_per_word */
    int nAdded;        /* added tokens matched in the raw text */
} WpConfig;
void wp_config(const Wordpiece *wp, WpConfig *pCfg);

#endif /* LP_EMBED_WORDPIECE_INT_H */
