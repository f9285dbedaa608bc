/*
** wordpiece.h — the BERT WordPiece tokenizer of a sentence-embedding model.
**
** Contract. wp_open() reads a model folder's tokenizer.json (Hugging Face
** `tokenizers` serialisation: BertNormalizer, BertPreTokenizer, WordPiece
** model, [CLS] A [SEP] post-processor) or, when that file is absent,
** vocab.txt plus tokenizer_config.json (do_lower_case, strip_accents,
** tokenize_chinese_chars). wp_encode() turns one text into token ids
** exactly as the Hugging Face library does for a single sequence:
**
**   specials    the special tokens ([CLS] [SEP] [UNK] [PAD] [MASK], the
**               tokenizer.json "added_tokens") are cut out of the raw text
**               first, case-sensitively: a literal "[SEP]" is id 102, as in
**               Python; the text between them is tokenized as below;
**   normalise   clean text (drop NUL, U+FFFD and control characters, i.e.
**               Cc/Cf/Co except \t \n \r, then map whitespace to ' '),
**               put spaces around CJK ideographs, strip accents (NFD, drop
**               Mn) and then lower-case, when the config says so
**               (strip_accents null = the value of lowercase);
**   pre-split   on whitespace, and every punctuation character (ASCII
**               punctuation and Unicode P*) is a word of its own;
**   WordPiece   greedy longest-match-first from the vocabulary, "##" on
**               continuation pieces, the whole word becomes [UNK] when a
**               piece cannot be matched or the word is longer than
**               max_input_chars_per_word characters;
**   wrap        [CLS] ids... [SEP].
**
** Truncation: at most nMax ids are produced ([CLS], the first nMax-2
** pieces, [SEP]); nMax is clamped to [2, WP_MAX_LEN]. Tokenizing stops as
** soon as the output is full, so a 10 MB text costs about what a text of
** nMax pieces costs, never more than a bounded amount of extra scanning.
** aId[0..nMax) is scratch space: ids past the returned count may have been
** written (pieces of a word that then turned into [UNK]).
**
** Invalid UTF-8 in the input is not an error: each invalid byte reads as
** U+FFFD, which the normaliser then drops (as clean_text does).
**
** Errors (wp_open): LP_NOTFOUND (neither tokenizer.json nor vocab.txt in
** the folder: the message names the folder), LP_CORRUPT (a file that
** cannot be parsed, or a vocabulary without [CLS]/[SEP]/[UNK]: the message
** names the file and what is wrong), LP_UNSUPPORTED (a tokenizer.json
** whose model is not WordPiece, whose normaliser / pre-tokenizer is not
** BERT's, whose post-processor is not [CLS] $A [SEP], with a "normalized"
** or "single_word" added token, or max_input_chars_per_word above 1024),
** LP_IOERR (a file that exists but cannot be read), LP_NOMEM.
**
** Unicode versions: HF takes Cc/Cf/Co, P* and Mn from Unicode 8.0 tables
** and lower-cases with Rust's (newer) tables; we use utf8proc's. Only
** characters assigned or re-categorised after Unicode 8 can differ.
**
** Thread safety: a Wordpiece is immutable after wp_open; wp_encode may be
** called from any number of threads at once and allocates nothing.
*/
#ifndef LP_EMBED_WORDPIECE_H
#define LP_EMBED_WORDPIECE_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

#define WP_MAX_LEN 512

typedef struct Wordpiece Wordpiece;

/* Opens the tokenizer of the model folder zDir (see above). */
Wordpiece *wp_open(const char *zDir, LpError *err);
void wp_close(Wordpiece *wp);

/* Tokenizes the n bytes at z into aId (room for nMax ids, nMax clamped as
** above) and returns the number of ids written: always >= 2 ([CLS] and
** [SEP], also for an empty or NULL text), 0 only when wp or aId is NULL. */
int wp_encode(const Wordpiece *wp, const char *z, size_t n, int nMax, int64_t *aId);

/* The vocabulary size (largest id + 1) and the special ids; wp_pad_id is
** 0 when the vocabulary has no [PAD]. */
int wp_vocab_size(const Wordpiece *wp);
int64_t wp_cls_id(const Wordpiece *wp);
int64_t wp_sep_id(const Wordpiece *wp);
int64_t wp_unk_id(const Wordpiece *wp);
int64_t wp_pad_id(const Wordpiece *wp);

#endif /* LP_EMBED_WORDPIECE_H */
