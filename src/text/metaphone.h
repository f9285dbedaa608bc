/*
** metaphone.h — morphology='metaphone': a word replaced by its phonetic
** code, as Sphinx and Manticore compute it: the primary code of Lawrence
** Philips' Double Metaphone (2000), so that "Smith" and "Smyth" are both
** SM0, "Knight" and "Night" both NT.
**
** Contract of metaphone_code():
**  - The word is read as Sphinx reads it: its ASCII letters in upper case,
**    every other byte as it is. A character beyond ASCII other than Ç, ç,
**    Ñ or ñ leaves the word as it is (no code), and so does a word whose
**    code would be empty ("h", "123": digits and other characters add
**    nothing, vowels only at the start).
**  - Codes are upper case: A (a vowel at the start), 0 (the "th" of
**    "thin"), B is never written (P), and F H J K L M N P R S T X (the
**    "sh" of "shop") as the algorithm's rules give them; they are not cut
**    to four letters (Sphinx's codes are not).
**  - The rules are the published algorithm's, with Sphinx's reading of
**    them where it departs: a word's start skips GN, KN, PN, WR and PS,
**    an X there is S; letters are matched against the word padded with
**    spaces, so a rule looking past the end sees blanks.
** The result is written to out (room for nOut bytes, cut there if it is
** longer); returns its length, or 0 when the word keeps no code.
**
** Pure function: no state, any number of threads at once.
*/
#ifndef LP_TEXT_METAPHONE_H
#define LP_TEXT_METAPHONE_H

/* The code of the word z[0..n) into out[0..nOut); its length, or 0 (the
** word is left as it is). */
int metaphone_code(const char *z, int n, char *out, int nOut);

#endif /* LP_TEXT_METAPHONE_H */
