#!/usr/bin/python3
"""MATCH syntax, loupe next to Sphinx 2.2.11: the same rows? (make bench-parity)

    bench/fulltext/parity.py [--loupe build/loupe] [--searchd searchd]

loupe's query language follows Sphinx's and Manticore's. This loads the
same small table (two full-text fields, 13 rows: phrases, repeats, HTML
zones, sentences, accents, e-mail and C++) into loupe and into a Sphinx RT
index with the same options (min_infix_len 2, index_sp, index_zones 'h*',
html_strip), then sends both every query of QUERIES and compares the ids
each returns (or that each refuses it). The queries cover every operator:
words, phrases, proximity, quorum, field scopes and limits, anchors,
exact forms, prefixes and wildcards (also inside phrases and as NEAR
operands), MAYBE, NOT, '<<' (nested ones too), NEAR, SENTENCE, PARAGRAPH
and zones. A second set runs on rows made for nested '<<', a third on a
stemmed table (morphology stem_en and min_infix_len 2, where both engines
index exact forms: Sphinx forces index_exact_words there, and so does
loupe), whose prefixes and wildcards match the words as written. A
fourth (near_set) draws rows and NEAR/N chains of two to five operands at
random, with one distance or several and with groups, for the automaton
Sphinx matches chains with, and another proximity phrases, NEAR chains
and MAYBEs as '<<' operands and ORs of words no row holds; bool_set
draws 300 boolean queries of every operator at random over 60 rows. One more has blend characters ('&' and '-',
blend_mode trim_head and trim_tail): tokens that hold them, tokens made of
them only, their parts, and word forms over them. Three more check the analysis options against
Sphinx's (over one charset_table both read alike): ignore_chars,
min_word_len and overshort_step; stop words with stopword_step 0,
exceptions and word forms; ngram_len and ngram_chars; expand_keywords
with exact forms and infixes; morphology 'stem_en, soundex' (names
that sound alike, the chain of processors); and morphology 'metaphone'
(words that sound alike, silent letters, the algorithm's special cases). The last (factor_set) compares WEIGHT()
under ranker=expr factors and Manticore's proximity rankers, row by row,
for queries of words, OR lists, NOT, MAYBE and field scopes, and for
phrases and chains; and snippet_set the words CALL SNIPPETS marks.

A difference is listed with the reason when loupe differs on purpose
(EXPECTED: where Sphinx warns and returns nothing, loupe names the error;
Manticore's and Lucene's syntax Sphinx 2.2.11 lacks; a Sphinx scan that
misses a chain that exists); any other difference is a finding. Writes
docs/benchmarks/parity.md; exits 1 when some difference is not expected.
Not a speed test: nothing is timed.
"""
import argparse
import os
import random
import re
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from common import (REPO, LoupeServer, SphinxServer, command_line, connect, git_revision,  # noqa: E402
                    machine, run_cli, utc_now, write_report)

OUT = os.path.join(REPO, "docs", "benchmarks", "parity.md")

# The analysis tables' charset_table (min_infix_len 2 as every table's:
# SPHINX_SECTION sets it; Sphinx 2.2.11's default has no
# accented or CJK letters, loupe's does) and their rules (Sphinx reads
# them from files in its folder, loupe from the _list options).
ANALYSIS_CS = "0..9, A..Z->a..z, _, a..z, U+410..U+42F->U+430..U+44F, U+430..U+44F"
ANALYSIS_EXCEPTIONS = ["C++ => cplusplus", "AT & T => att"]
ANALYSIS_WORDFORMS = ["walks > walk", "core 2 duo > c2d"]
ANALYSIS_STOPWORDS = ["the", "and", "of"]
# The blend table's word forms: one word to one (a blend token's form), a
# run of words that a blend token's part could start.
BLEND_WORDFORMS = ["at&t&x > telco", "t mobile > cell"]

# The analysis tables (xi, xs, xg, xe) in Sphinx: ignore_chars, min_word_len
# and overshort_step; stop words with stopword_step 0, exceptions and word
# forms; n-grams of CJK characters; expand_keywords over exact forms and
# infixes.
ANALYSIS_SPHINX = {
    "xi": "    charset_table   = %s\n    ignore_chars    = U+AD, -\n    min_word_len    = 3\n"
          "    overshort_step  = 0\n" % ANALYSIS_CS,
    "xs": "    charset_table   = %s\n    stopwords       = {dir}/stopwords.txt\n    stopword_step   = 0\n"
          "    exceptions      = {dir}/exceptions.txt\n    wordforms       = {dir}/wordforms.txt\n"
          % ANALYSIS_CS,
    "xg": "    charset_table   = %s\n    ngram_len       = 1\n    ngram_chars     = U+3000..U+30FF, U+4E00..U+9FFF\n"
          % ANALYSIS_CS,
    "xe": "    charset_table   = %s\n    morphology      = stem_en\n    index_exact_words = 1\n"
          "    expand_keywords = 1\n" % ANALYSIS_CS,
}

# Each table's options in loupe.
OPTIONS = {"t": "min_infix_len='2' index_sp='1' index_zones='h*' html_strip='1'",
           "n": "min_infix_len='2'",
           "s": "min_infix_len='2' morphology='stem_en'",
           "r": "min_infix_len='2'",
           "p": "min_infix_len='2'",
           "q": "min_infix_len='2'",
           "k": "min_infix_len='2'",
           "b": "min_infix_len='2' blend_chars='&, -' blend_mode='trim_head, trim_tail' wordforms_list='%s'"
                % "; ".join(BLEND_WORDFORMS),
           # analysis options, over one charset_table both engines read alike
           "xi": "charset_table='%s' min_infix_len='2' ignore_chars='U+AD, -' min_word_len='3' overshort_step='0'" % ANALYSIS_CS,
           "xs": "charset_table='%s' min_infix_len='2' stopwords_list='the and of' stopword_step='0' exceptions_list='%s' "
                 "wordforms_list='%s'" % (ANALYSIS_CS, "; ".join(ANALYSIS_EXCEPTIONS),
                                          "; ".join(ANALYSIS_WORDFORMS)),
           "xg": "charset_table='%s' min_infix_len='2' ngram_len='1' ngram_chars='U+3000..U+30FF, U+4E00..U+9FFF'" % ANALYSIS_CS,
           "xe": "charset_table='%s' min_infix_len='2' morphology='stem_en' index_exact_words='1' expand_keywords='1' "
                 "" % ANALYSIS_CS,
           # phonetic: soundex after the English stemmer, as a chain of processors
           "xp": "charset_table='%s' min_infix_len='2' morphology='stem_en, soundex'" % ANALYSIS_CS,
           # phonetic: Double Metaphone's primary codes, alone
           "xm": "charset_table='%s' min_infix_len='2' morphology='metaphone'" % ANALYSIS_CS}

# Each table's Sphinx section: the same fields, its own options ({{dir}}
# stays for SphinxServer's str.format).
SPHINX_SECTION = """\
index {name}
{{{{
    type            = rt
    path            = {{dir}}/data/{name}
    rt_field        = title
    rt_field        = body
    rt_attr_uint    = pad
    min_infix_len   = 2
{extra}}}}}
"""
SPHINX_INDEX = (SPHINX_SECTION.format(name="t", extra="    index_sp        = 1\n    index_zones     = h*\n"
                                                       "    html_strip      = 1\n")
                + SPHINX_SECTION.format(name="n", extra="")
                + SPHINX_SECTION.format(name="s", extra="    morphology      = stem_en\n")
                + SPHINX_SECTION.format(name="r", extra="")
                + SPHINX_SECTION.format(name="p", extra="")
                + SPHINX_SECTION.format(name="q", extra="")
                + SPHINX_SECTION.format(name="k", extra="")
                + SPHINX_SECTION.format(name="b", extra="    blend_chars     = &, -\n"
                                                       "    blend_mode      = trim_head, trim_tail\n"
                                                       "    wordforms       = {dir}/blendforms.txt\n")
                + "".join(SPHINX_SECTION.format(name=n, extra=x) for n, x in ANALYSIS_SPHINX.items())
                + SPHINX_SECTION.format(name="xp", extra="    charset_table   = %s\n"
                                                        "    morphology      = stem_en, soundex\n" % ANALYSIS_CS)
                + SPHINX_SECTION.format(name="xm", extra="    charset_table   = %s\n"
                                                        "    morphology      = metaphone\n" % ANALYSIS_CS))

# The phonetic table's rows and queries: names that sound alike, words the
# stemmer changes first (then soundex is not tried), short words, digits.
PHONETIC_ROWS = [("Robert Smith", "Rupert Smyth runs"),
                 ("Rubin Ashcraft", "Ashcroft Tymczak"),
                 ("Pfister Honeyman", "hello world"),
                 ("Lee", "Li Lea"),
                 ("a ab abc", "running cats"),
                 ("123abc x", "tymczuk lloyd")]
PHONETIC_QUERIES = """
robert
rupurt
smith
smyth
"robert smith"
"rupert smith"
rubin
rubens
ashcroft
tymczak
pfister
honeymann
hello
lee
li
a
ab
abc
run
running
runner
cat
cats
123abc
x
r163
rob*
ash*
lloyd
loyd
robert NEAR/2 smyth
"""

# The metaphone table's rows and queries: names and words that sound
# alike, silent letters, the algorithm's special cases, digits.
METAPHONE_ROWS = PHONETIC_ROWS + [("Knight Thomas", "Schmidt Caesar"),
                                  ("Philip Xavier", "Wright Psychology"),
                                  ("edge laugh", "Michael chorus"),
                                  ("gnome island", "school sugar")]
METAPHONE_QUERIES = """
smith
smyth
schmidt
smit
night
knight
tomas
thomas
filip
phillip
zavier
xavier
rite
write
sykology
psychology
ej
edge
laf
laugh
mikael
michael
korus
chorus
nome
gnome
iland
island
skool
school
shugar
sugar
robert
rupurt
"rupert smith"
123abc
pk
h
"""

# The analysis tables' rows and queries.
ANALYSIS_ROWS = [("Hello World_wide 42", "Привет мир hello"),
                 ("東京タワー 東京都", "tokyo tower"),
                 ("e-mail soft\u00adware", "a big cat of the day"),
                 ("the cat and the dog", "C++ rocks at AT & T"),
                 ("core 2 duo walks", "x1 y22 z333 a4a"),
                 ("cat dog", "big day"),
                 ("one of two", "e mail"),
                 ("software", "ab abc abcd"),
                 ("walk walking walks", "hello-world foo_bar"),
                 ("京 x 東", "")]
ANALYSIS_QUERIES = """
of | "big day"~3
(the | big) << day
day NEAR/3 (of | big)
(of | and) << dog
of (big NEAR/3 day)
hello
world_wide
wide
42
привет
ПРИВЕТ
東京
京
"東 京"
タワー
tokyo
email
e-mail
software
soft
"big cat"
"a big cat"
"cat the day"
"cat of the day"
"big cat of day"
"cat and dog"
"cat dog"
"the cat"
cplusplus
c++
att
"at & t"
c2d
"core 2 duo"
walk
walks
walking
x1
z333
a4a
"ab abc"
"abc abcd"
"one two"
"one of two"
of
hello-world
foo_bar
@title software
@body "cat dog"
ell
ftw
ware
orld
cat
ca
"hello world"
"hello wor"
"big day"~3
"cat big day"/2
cat NEAR/2 dog
hello << world
"""

# Blend characters (table b): tokens that hold them, tokens of them only
# ("&", "&&": words of their own in every blend_mode), their parts.
BLEND_ROWS = [("at&t company", "the at & t deal"),
              ("at t company", "x && y"),
              ("at company t", "&at&t& z"),
              ("att company", "-x- y"),
              ("t at", "&at&t"),
              ("at-t", "x - & y"),
              ("at&t&x", "at& thing"),
              ("&t thing", "q"),
              ("at&t mobile", "x t mobile")]
BLEND_QUERIES = """
at&t
"at&t company"
"at t"
at & t
"at & t"
&&
&
"x && y"
"x y"
"x - & y"
at-t
at&t&x
att
@title at&t
"at t z"
at&t | x&&y
&at&t&
&at&t
at&t&
at&
&t
telco
cell
mobile
"t mobile"
at&t$
^at&t$
^&at&t$
t$
"at t z$"
"""

ROWS = [("hello world", "what's up doc. Next sentence here"),
        ("aa end.</p><p>Start zz", ""),
        ("hello there big world", "nothing at all"),
        ("world big hello", "x y z"),
        ("new york city", "the big apple is big"),
        ("new yorkshire pudding", "york and new"),
        ("quick brown fox", "the fox jumps over the lazy dog"),
        ("lazy dog", "the dog sleeps all day"),
        ("brown bear", "a bear is brown and big and quick"),
        ("red fox", "foxes are red and quick"),
        ("e-mail me", "send an email to me@host.com now"),
        ("c++ and c#", "programming in c++ is fun"),
        ("<h1>title here</h1>", "<h2>sub</h2> body text"),
        ("über café", "naïve résumé"),
        ("first part one\n\ntwo more", "")]

# Rows for nested '<<' (table n).
NESTED_ROWS = [("b c a b", ""), ("a b c", ""), ("c a b", ""), ("a c b c", ""), ("b a x c", ""),
               ("a b", "b x c"), ("a x b c b", "c a b"), ("a b a b c", "c b a"), ("b a b c a b c", ""),
               ("a a b b c c", ""), ("a x b", ""), ("x a b", "")]

# Rows for stemmed prefixes and wildcards (table s).
STEMMED_ROWS = [("running fast", "the runner runs"), ("kinases", "protein kinase activity"),
                ("run", "walking"), ("Tiling", "a tiled floor"), ("studies", "studying the studied"),
                ("connection", "connected connecting"), ("run run", "")]

QUERIES = """\
hello
end NEAR/2 start
^title
here$
"one two"
one PARAGRAPH two
"hello world"
"hello world"~2
hello -world
hello | nothing
@title hello
@(title,body) big
@!title big
@@relaxed @(title,nope) quick
@@relaxed quick @nope fox
@@relaxed (@nope quick) fox
@@relaxed quick | @nope fox
@@relaxed quick NEAR/3 @nope fox
@@relaxed quick << @nope (fox | dog)
@@relaxed @nope quick @title fox
@@relaxed @nope quick
quick @title
hello << world
hello NEAR/2 big
"hello big world"/2
^hello
world$
=hello
hel*
*orl*
w?rld
hello MAYBE big
"what's up"
what's
e-mail
email
me@host.com
c++
c#
"new yor*"
"new *ork"
"*ew york"
"new *ork*"~2
"yo*k new"~3
"*ork* new *ity"/2
"new *ork city"
y*ork
y*
^hel*
*orld$
yor*$
^*ork
new NEAR/1 yor*
"world$ big"
"big ^hello"
"hello world$"~3
"hello$ big"~2
"^big world"~3
"new york$"/2
"dog$ lazy"/1
"lazy$ *"
hello NEAR/3 *orl*
"hello wo*"~3
"hello wor*"/1
hello SENTENCE wor*
ZONE:h1 title
ZONE:(h1,h2) sub
ZONESPAN:h1 title here
"lazy dog" << sleeps
(lazy dog) << sleeps
hello SENTENCE doc
what SENTENCE next
what << up SENTENCE doc
what << next SENTENCE here
up << doc SENTENCE next
what << (sentence SENTENCE here)
up PARAGRAPH sentence
(what SENTENCE doc) NEAR/3 next
next NEAR/2 up SENTENCE doc
here NEAR/4 what SENTENCE doc
what SENTENCE up NEAR/2 doc
(what SENTENCE up) NEAR/3 (next SENTENCE here)
"*ork pudding"/1 NEAR/2 new
"^*ork apple"/1 NEAR/2 new
(over "lazy dog" -red) NEAR/1 jumps
(fox "lazy dog" -red) NEAR/3 over
(the (fox << jumps) -red) NEAR/2 lazy
REGEX(/yor.*/)
"(fox | dog) (apple | city)"/2
über
uber
cafe
café
naive
@title[2] big
@body[3] bear
"the * fox"
"brown fox"~1
"fox brown"~1
!hello
-hello
hello -"big world"
(hello | fox) (world | dog)
"hello|world"
hello\\|world
big^2 world
@title ^big
"^hello world$"
hello world | big
quick*
qu*ck
*ick
x y z
"x y z"/1
"x z"~1
title:hello
@title (hello | new) big
new york
"new york"
big NEAR/3 apple
big NEAR/3 big
big NEAR/2 big
big NEAR/1 big
the NEAR/3 the
the NEAR/4 the
"big apple" NEAR/2 apple
big NEAR/1 apple NEAR/3 big
big SENTENCE big
big << big
fox NEAR/9 fox
"the big" NEAR/5 big
"big apple"/1
"big apple is"/0.5
hello MAYBE (world | big)
(hello MAYBE world) big
hello world MAYBE big
@title big @body big
@title -big
@(title) "hello world"
"hello" "world"
(("hello"))
hello (world (big))
hello | world | big -x
(big | apple) -(is | x)
"big * big"
"big * * big"
"^the big"
"big$"
"is big$"
^the
^"the big"
big apple$
=big
"=big apple"
="big apple"
@title hel* wor*
hel* | app*
h*o
*l*o
"hello world"~0
"big apple"~10 is
hello -world | big
-(hello) big
big !apple
big -apple -is
(big -apple) | hello
@title[1] hello
@body[2] big
big NEAR/2 apple NEAR/2 is
big << apple << is
"big apple" << is << big
the << the
hello world -"world big"
"new york"/2
new | york | city
"""

# Proximity phrases, NEAR chains of one distance and MAYBEs as '<<' operands
# (their windows, overlapping ones too; the chains Sphinx's automaton
# completes; both sides) and ORs whose parts all match nothing inside an
# AND (table p).
WINDOW_ROWS = [("aa xx bb aa", ""), ("aa bb aa xx", ""), ("aa xx bb bb aa", ""), ("bb aa xx aa bb", ""),
               ("aa bb cc aa xx bb", ""), ("aa xx bb", ""), ("cc aa dd bb", ""), ("aa xx bb cc aa", "cc")]
WINDOW_QUERIES = """\
xx << "aa bb"~3
"aa bb"~3 << xx
xx << "aa bb"~5
"aa bb"~1 << xx
cc << "aa bb"~3
dd << "aa bb"~3
"aa bb"~3 << cc
xx << "aa bb cc"~3
"aa bb cc"~3 << xx
xx << ("aa bb"~3 | dd)
("aa bb"~2 | dd) << xx
xx << (aa NEAR/3 bb)
(aa NEAR/3 bb) << xx
xx << (aa NEAR/1 bb)
xx << (aa NEAR/3 bb NEAR/3 cc)
(aa NEAR/3 bb NEAR/3 cc) << xx
xx << ((aa | cc) NEAR/3 bb)
(aa MAYBE bb) << xx
xx << (aa MAYBE bb)
(aa NEAR/4 bb) << xx
("aa xx" NEAR/3 bb) << cc
(aa NEAR/4 bb) << cc
xx << (aa MAYBE (bb | cc))
aa (zzq | yyq)
aa (zzq | yyq*)
aa ("zzq yyq" | qqq)
aa (@body zzq | yyq)
aa -(zzq | yyq)
aa | (zzq | yyq)
aa MAYBE (zzq | yyq)
aa (zzq | bb)
aa ((zzq | yyq) << bb)
aa @body cc << @title (aa | bb)
aa NEAR/3 bb << xx
aa NEAR/1 bb << cc
aa NEAR/4 bb NEAR/4 cc << xx
aa | cc NEAR/3 bb << xx
xx << bb << aa NEAR/2 cc
(bb | (aa -cc)) << dd
^aa << bb
xx << aa$
^aa NEAR/2 xx
"^aa xx" << bb
aa NEAR/1 bb$
^cc << (aa | bb) << bb$
@title[1] bb*
@title[1] bb
@title[3] ^bb
"""

NESTED_QUERIES = """\
(a << b) << c
a << b << c
c << (a << b)
((a b) << c) << b
(b << c) << (a << b)
(a << (b c)) << c
(a << b) << (b << c)
a << (b << c) << b
((a << b) << c) << b
(a | c) << (b << c)
(a b) << c
x << (a << b)
a << (x << b)
"""

STEMMED_QUERIES = """\
"running run"~4
"running run owl"/2
runn*
run*
runs*
*ing
@title *ing
*kinase
kinase*
kinas*
*nase*
*unne*
"the runn*"
"runn* fast"
runn* NEAR/2 fast
til*
tile*
=running
running
runn* -fast
"protein kin*"
stud*
studi*
*ied
connect*
*ect*
*ection
studies
"""

# Queries where loupe differs from Sphinx 2.2.11 on purpose, and why.
# Row 13 is "über café" / "naïve résumé". loupe folds accents (a new
# table's remove_diacritics='1', as Manticore's default charset_table
# does); Sphinx 2.2.11's default charset_table has no accented letters at
# all and splits at them ("über" is "ber").
ACCENTS = ("accents are folded (remove_diacritics, on by default, as Manticore's default charset_table); "
           "Sphinx 2.2.11's charset_table has no accented letters and indexes 'über' as 'ber'")

EXPECTED = {
    "y*ork": "a wildcard's longest part must have min_infix_len characters (docs/sql.md); Sphinx 2.2.11 also "
             "wants its part before the first '*' that long, and finds nothing for 'y*ork'",
    "y*": "on a table with min_infix_len and no min_prefix_len a prefix of any length is searched (docs/sql.md); "
          "Sphinx 2.2.11 wants min_infix_len characters before the '*' there, and finds nothing",
    '"new *ork"': "a wildcard word of a phrase takes one place (docs/sql.md); Sphinx 2.2.11 counts the '*' before "
                  "a word after the first as a place of its own, so there 'york' would have to be third",
    '"new *ork city"': "a wildcard word of a phrase takes one place (docs/sql.md); Sphinx 2.2.11 counts the '*' "
                       "before a word after the first as a place of its own",
    "CALL SNIPPETS('fox gnu emu gnu fox', 'gnu -emu')": "a NOT's words are not marked (as in Manticore); Sphinx "
                                                       "2.2.11's snippets mark every word of the query",
    "(a (b MAYBE c)) NEAR/2 d": "the MAYBE in the spliced group is an operand of its words, a NEAR chain of three "
                                "with an OR list, which loupe runs as one chain per choice (docs/sql.md) and "
                                "Sphinx as one automaton with the list as one operand; for two operands the "
                                "two agree",
    '(a "b c d"/2) NEAR/2 e': "the quorum in the spliced group is an operand of its words, a NEAR chain of "
                              "three with an OR list: one chain per choice in loupe, one automaton in Sphinx "
                              "(as for any OR list, docs/sql.md)",
    # ranking factors (table k)
    "gnu OPTION ranker=expr('sum(max_window_hits(3))')":
        "max_window_hits(n) counts occurrences in n positions running (docs/sql.md); Sphinx slides its "
        "window over its packed hit positions (twice the position, plus a field-end bit), so its "
        "window of 3 holds 'gnu' at 2 and 4 apart",
    "gnu hen OPTION ranker=expr('sum(lccs)')":
        "lccs is a field's own; Sphinx carries its run from one field into the next: 'gnu' last in the "
        "title at 4 and 'hen' at 5 in the body make a run of 2 there",
    "-dog cat OPTION ranker=expr('max_lcs')":
        "a NOT's word is no keyword, so max_lcs (and matchany, exact_order) leave it out; Sphinx counts "
        "it among the query's words",
    "dog gnu hen OPTION ranker=expr('sum(min_best_span_pos)')":
        "min_best_span_pos is where the best run starts; Sphinx takes its last position less its "
        "length, which is off by the gaps a run of words as far apart as in the query has ('dog cat "
        "hen' for 'dog gnu hen': loupe 1, Sphinx 2)",
    "-dog cat OPTION ranker=expr('query_word_count')":
        "query_word_count leaves a NOT's word out (Manticore's documentation: inclusive keywords); "
        "Sphinx 2.2.11 counts it",
    "hen NEAR/2 cat OPTION ranker=expr('sum(hit_count)')":
        "a proximity phrase's or chain's words count in each field it holds in, every occurrence there; "
        "Sphinx counts only the occurrences its operator matched - not yet as in Sphinx, docs/sql.md "
        "(an exact phrase's words count where it matches, as in Sphinx)",
    "emu NEAR/2 fox | cat OPTION ranker=expr('doc_word_count')":
        "'|' binds tighter: a NEAR chain with an OR list is the OR of one chain per choice (docs/sql.md), "
        "and every chain that holds in a field passes on its words; Sphinx's one automaton over the "
        "list passes on the occurrences of the chains it completes, here without 'fox'",
    "gnu | (hen -cat) OPTION ranker=expr('sum(hit_count)')":
        "a clause that does not match a row passes on none of its words' occurrences there, one a NOT "
        "turns down too (docs/sql.md); Sphinx 2.2.11's AND NOT passes on its left side's whatever the "
        "NOT finds",
    "gnu | (^hen MAYBE cat) OPTION ranker=expr('sum(hit_count)')":
        "a MAYBE that does not match a row passes on none of its words' occurrences there; Sphinx "
        "2.2.11 passes on its optional side's in some rows and not in others, as its chunks of rows fall "
        "(over one row it does not)",
    "gnu | \"cat dog emu\"/2 OPTION ranker=expr('sum(hit_count)')":
        "a quorum that does not match a row passes on none of its words' occurrences there; Sphinx "
        "2.2.11 passes on a quorum's in some rows (10, 39) and not in others (2), as its chunks of rows "
        "fall",
    "gnu | (hen << cat) OPTION ranker=expr('sum(hit_count)')":
        "an ORDER's words count where it holds, every occurrence; Sphinx counts only the occurrences "
        "its operator matched, as for NEAR (docs/sql.md)",
    "cat cat OPTION ranker=wordcount":
        "a word the query repeats is one keyword to hit_count; Sphinx's wordcount ranker counts each "
        "occurrence once per place the query holds the word",
    "uber": ACCENTS,
    "cafe": ACCENTS,
    "naive": ACCENTS,
    "w?rld": "'?' in a word is one character (Manticore's inline wildcard); Sphinx 2.2.11 takes "
             "it as a too-short prefix",
    "me@host.com": "'@' inside a word is part of it (docs/sql.md); Sphinx reads a field operator",
    "(what SENTENCE up) NEAR/3 (next SENTENCE here)":
        "a NEAR/N chain with two SENTENCE or PARAGRAPH operands holds where they occur near each other "
        "(docs/sql.md); Sphinx 2.2.11 finds no row for one",
    "REGEX(/yor.*/)": "Manticore's REGEX() operator (docs/sql.md); Sphinx 2.2.11 has none and refuses it",
    "\"(fox | dog) (apple | city)\"/2": "a quorum counts an OR group as one word, as Manticore documents; "
                                          "Sphinx 2.2.11 reads the parentheses and '|' as separators and counts "
                                          "each word of the group",
    "hello SENTENCE doc": "SENTENCE holds in one field; Sphinx pairs 'hello' of the title with "
                          "'doc' of the body",
    "hello\\|world": "an escaped '|' joins the text into one word, searched as the phrase "
                     "\"hello world\"; Sphinx ANDs two words",
    "title:hello": "Lucene's field alias (issue 3); Sphinx searches the words 'title' and 'hello'",
    "^\"the big\"": "'^' before a phrase is an error that says where the anchor goes (\"^the big\"); "
                    "Sphinx warns and drops it",
    "h*o": "a wildcard part under min_infix_len is an error naming it; Sphinx warns and matches "
           "nothing",
    "*l*o": "a wildcard part under min_infix_len is an error naming it; Sphinx warns and matches "
            "nothing",
    "\"hello world\"~0": "~0 is an exact phrase; Sphinx refuses it",
    "&at&t&": "a blend token that no variant of blend_mode keeps as written is looked for as its first "
              "variant (trim_head's 'at&t&', under which its own text is indexed); Sphinx looks for it "
              "as written, a term blend_mode never makes, and misses row 3, whose body holds it",
    "\"x - & y\"": "'-' and '&' are each a word of their own (blend characters only); with a word form "
                   "of several words (t mobile > cell) Sphinx's multiform tokenizer loses the '-' of a query "
                   "(\"x - y\" then finds \"x y\"), so the phrase no longer fits the row that holds it",
    "xx << ((aa | cc) NEAR/3 bb)": "a NEAR chain with an OR list is the OR of one chain per choice "
                                   "(docs/sql.md), and as a '<<' operand each choice's chains are its own "
                                   "automaton's: cc NEAR/3 bb completes 3-4 in 'aa xx bb cc aa'; Sphinx runs "
                                   "one automaton over aa, cc and bb together, where cc takes aa's place "
                                   "and completes nothing",
    "@title[1] bb*": "a position limit holds for a prefix's terms too (docs/sql.md); Sphinx 2.2.11 "
                     "drops it for the terms a prefix or wildcard expands to, and so for every word of "
                     "a table with expand_keywords",
    "^title": "with index_sp, a block tag first in a field takes no position (docs/sql.md); Sphinx "
              "gives '<h1>' a position, so 'title' is second there",
    "here$": "with index_sp, a block tag last in a field takes no position; Sphinx's '</h1>' after "
             "'here' leaves the field no last word",
    "\"one two\"": "a blank line ends a paragraph (docs/sql.md), and the boundary takes a position, "
                    "so the phrase does not span it; Sphinx ends paragraphs at block-level tags only",
    "one PARAGRAPH two": "a blank line ends a paragraph; Sphinx ends paragraphs at block-level tags only",
    "\"running run\"~4": "words that analyse alike are one word, each occurrence taken once: the "
                          "proximity needs two occurrences of 'run'; in Sphinx one fits it",
    "(bb | (aa -cc)) << dd": "an OR alternative that the row does not match adds no occurrences to a "
                             "'<<' chain; Sphinx passes on aa of (aa -cc), which the row's cc rejects, "
                             "because bb matches",
    "of | \"big day\"~3": "an OR of a stop word and a proximity phrase is that phrase, as 'of | big' "
                           "is 'big' in both; Sphinx drops row 3 (big ... day with the stop words "
                           "between them) there, and on table xi, where 'of' is under min_word_len, "
                           "it refuses 'of | ...' as a syntax error",
    "@title[3] ^bb": "an anchor holds under a position limit (docs/sql.md); Sphinx 2.2.11 drops '^' "
                     "and '$' under one",
    "t$": "a part of a blend token is at the field's end only when it is the token's last part (docs/sql.md); "
          "Sphinx takes every part of the field's last token as at its end ('t' of 'at&t&x')",
    "東京": "a CJK word of a query is the phrase of its characters (with ngram_len, and by default); "
           "Sphinx 2.2.11 with ngram_len ANDs them, so it also finds '京 x 東'",
    "day NEAR/3 (of | big)": "on table xi, where 'of' is under min_word_len, Sphinx refuses 'of |' as a "
                             "syntax error; on xs (stop words) both leave 'of' out of the list",
    "(of | and) << dog": "on table xi, where 'of' is under min_word_len, Sphinx refuses 'of |' as a syntax "
                         "error; on xs (stop words) both leave the list out of the chain",
    "of (big NEAR/3 day)": "a stop word ANDed with a NEAR chain changes nothing (docs/sql.md); Sphinx "
                           "(stopword_step 0) then misses row 3, big ... day with the stop words between "
                           "them, as if they took positions",
    "end NEAR/2 start": "a sentence's end followed by a paragraph's is one boundary, one position "
                        "(docs/sql.md); Sphinx counts each, so 'end' and 'Start' are 3 apart there",
    "\"running run owl\"/2": "words that analyse alike are one word of a quorum (docs/sql.md): this "
                              "one needs run and owl; Sphinx counts running and run each, each taking "
                              "an occurrence of its own, so 'run run' is 2 of 3 there",
    "a << (b << c) << b": "the ORDER holds wherever a chain exists; Sphinx's one-pass scan misses "
                          "the chain a 1, (b 2, c 3), b 5 in 'b a b c a b c'",
}


# NEAR/N operands that stand for their words' occurrences and must match
# themselves (a MAYBE, a quorum, a group with a negation and more; a MAYBE
# or quorum in a group spliced into the chain), on near_set's rows; mostly
# two operands, where loupe's chain per choice and Sphinx's one automaton
# agree.
NEAR_WORDS_QUERIES = ["(a MAYBE b) NEAR/1 c", "(a MAYBE b) NEAR/2 c", "c NEAR/1 (a MAYBE b)",
                      "(a MAYBE b) NEAR/2 (c MAYBE d)", '"a b c"/2 NEAR/1 d', 'e NEAR/2 "a b c"/2',
                      "(a b -x) NEAR/1 c", "(a b -x) NEAR/3 c", "(a (b MAYBE c)) NEAR/1 d",
                      "(a | b -x) NEAR/1 c", "(a (b MAYBE c)) NEAR/2 d", "(a b MAYBE c) NEAR/1 d",
                      '(a "b c d"/2) NEAR/2 e']


def near_set(seed=2026, n_rows=120, n_chains=70, n_groups=40, n_any=80):
    """Rows and NEAR/N chains drawn at random (table r), for the automaton
    Sphinx matches chains of three or more operands with: rows of letters
    (a-e, and x and y that no chain asks for), chains of 2 to 5 distinct
    letters, one distance or several, and chains with groups: of two
    letters, or of one and a negation; chains with operands that are more
    than words (proximity phrases, '<<' chains, NEAR/N chains not first, a
    MAYBE with a phrase, an OR list of these), each letter once; then
    NEAR_WORDS_QUERIES. Seeded: the same every run."""
    rnd = random.Random(seed)
    rows = [(" ".join(rnd.choice("abcdexxyy") for _ in range(rnd.randint(3, 16))), "")
            for _ in range(n_rows)]
    queries = []

    def chain(ops, dists):
        q = ops[0]
        for d, o in zip(dists, ops[1:]):
            q += " NEAR/%d %s" % (d, o)
        return q

    while len(queries) < n_chains:
        ops = rnd.sample("abcde", rnd.randint(2, 5))
        d = [rnd.choice([1, 2, 3, 4, 6])] * (len(ops) - 1)
        if rnd.random() < 0.5:
            d = [rnd.choice([1, 2, 3, 4, 6]) for _ in d]
        q = chain(ops, d)
        if q not in queries:
            queries.append(q)
    while len(queries) < n_chains + n_groups:
        letters = rnd.sample("abcde", 5)
        k = rnd.randint(2, 4)
        ops, i = [], 0
        for j in range(k):
            if rnd.random() < 0.4 and i + 2 <= 5 - (k - j - 1):
                ops.append("(%s %s)" % (letters[i], letters[i + 1]))
                i += 2
            elif rnd.random() < 0.15:
                ops.append("(%s -x)" % letters[i])
                i += 1
            else:
                ops.append(letters[i])
                i += 1
        if all(o[0] != "(" for o in ops):
            continue
        q = chain(ops, [rnd.choice([1, 2, 3, 4, 6]) for _ in range(k - 1)])
        if q not in queries:
            queries.append(q)
    while len(queries) < n_chains + n_groups + n_any:
        letters = rnd.sample("abcdexy", 7)
        ops = []
        for _ in range(rnd.randint(2, 3)):
            if len(letters) < 3:
                break
            a, b, c = letters.pop(), letters.pop(), letters[-1]
            op = rnd.choice(['"%s %s"~%d' % (a, b, rnd.randint(1, 3)), "(%s << %s)" % (a, b),
                             '(%s MAYBE "%s %s")' % (a, b, c), '("%s %s"~1 | %s)' % (a, b, c), a, '"%s %s"' % (a, b),
                             "(%s NEAR/%d %s)" % (a, rnd.randint(1, 3), b),
                             "(%s NEAR/%d %s NEAR/%d %s)" % (a, rnd.randint(1, 2), b, rnd.randint(3, 4), c)])
            if c in op:
                letters.pop()
            ops.append(op)
        if len(ops) < 2 or all(o[0] not in '("' or (o[0] == '"' and "~" not in o) for o in ops):
            continue
        q = chain(ops, [rnd.choice([1, 2, 3, 4]) for _ in range(len(ops) - 1)])
        if rnd.random() < 0.2:
            a, b, c = rnd.sample("abcde", 3)
            q = "%s << %s NEAR/%d %s" % (a, b, rnd.randint(1, 4), c)
        if q not in queries:
            queries.append(q)
    return rows, queries + NEAR_WORDS_QUERIES


BOOL_WORDS = ["cat", "dog", "emu", "fox", "gnu", "hen", "owl", "pig", "rat", "yak"]


def bool_set(seed=2026, n_rows=60, n_queries=300):
    """Rows and boolean queries drawn at random (table q): words, prefixes,
    exact, proximity and quorum phrases, groups, field scopes and NEAR/N
    pairs (in parentheses), joined by AND, OR, NOT, MAYBE and '<<', nested
    up to three deep. Each query uses each of ten words at most once:
    Sphinx's handling of a keyword repeated across operands is its own
    (parity's other sets have such queries). Seeded: the same every run."""
    rnd = random.Random(seed)
    rows = [(" ".join(rnd.choice(BOOL_WORDS) for _ in range(rnd.randint(1, 6))),
             " ".join(rnd.choice(BOOL_WORDS) for _ in range(rnd.randint(0, 12)))) for _ in range(n_rows)]

    def query():
        left = list(BOOL_WORDS)
        rnd.shuffle(left)

        def word():
            if not left:
                return None
            w = left.pop()
            return w[:2] + "*" if rnd.random() < 0.1 else w

        def atom(d):
            r = rnd.random()
            if d > 2 or r < 0.45:
                return word()
            if r < 0.6:
                n = rnd.randint(2, 3)
                if len(left) < n:
                    return None
                ws = " ".join(left.pop() for _ in range(n))
                s = rnd.random()
                if s < 0.5:
                    return '"%s"' % ws
                if s < 0.75:
                    return '"%s"~%d' % (ws, rnd.randint(1, 4))
                return '"%s"/%d' % (ws, rnd.randint(1, 2))
            if r < 0.75:
                e = expr(d + 1)
                return None if e is None else "(%s)" % e
            if r < 0.85:
                e = expr(d + 1)
                return None if e is None else "@%s (%s)" % (rnd.choice(["title", "body"]), e)
            if len(left) < 2:
                return None
            return "(%s NEAR/%d %s)" % (left.pop(), rnd.randint(1, 3), left.pop())

        def expr(d=0):
            a = atom(d)
            if a is None:
                return None
            for _ in range(rnd.randint(0, 2)):
                r = rnd.random()
                b = atom(d + 1)
                if b is None:
                    break
                if r < 0.35:
                    a = a + " " + b
                elif r < 0.6:
                    a = a + " | " + b
                elif r < 0.75:
                    x = word()
                    if x is None:
                        break
                    a = a + " -" + x
                elif r < 0.85:
                    a = "(%s) MAYBE (%s)" % (a, b)
                else:
                    a = a + " << " + b
            return a
        return expr()

    queries = []
    while len(queries) < n_queries:
        q = query()
        if q and q not in queries:
            queries.append(q)
    return rows, queries


# The factors both engines define alike, as ranker=expr expressions, and
# the built-in rankers made of them (table k's weights are whole numbers).
FACTOR_OPTIONS = ["ranker=expr('sum(lcs)')", "ranker=expr('sum(hit_count)')",
                  "ranker=expr('sum(word_count)')", "ranker=expr('top(min_hit_pos)')",
                  "ranker=expr('doc_word_count')", "ranker=expr('field_mask')",
                  "ranker=expr('max_lcs')", "ranker=expr('sum(min_gaps)')",
                  "ranker=expr('sum(lcs*user_weight)'), field_weights=(title=3, body=1)",
                  "ranker=expr('max_lcs'), field_weights=(title=3, body=1)",
                  "ranker=proximity", "ranker=wordcount", "ranker=matchany", "ranker=fieldmask"]
FACTOR_WORDS = ["cat", "dog", "emu", "fox", "gnu", "hen"]
# For phrases and chains: the factors that say which fields and words
# match (Sphinx's operators pass on only the occurrences they matched, and
# its lcs and hit counts see a phrase's match as one hit: FACTOR_EXTRA).
FACTOR_PHRASE_OPTIONS = ["ranker=expr('field_mask')", "ranker=expr('sum(word_count)')",
                         "ranker=expr('doc_word_count')", "ranker=fieldmask"]
# Anchored words: their occurrences count only where the anchor holds (a
# field's first or last word), as Sphinx's term nodes pass on only those.
FACTOR_ANCHORED = ["gnu | ^hen", "gnu | hen$", "^gnu hen$", "cat (^dog | fox$)", "@title ^emu | cat",
                   "^fox$ | gnu", "(^cat hen) | dog$",
                   # and ANDs that miss a row the query matches (a part of an OR, a
                   # MAYBE's optional part): their words count nowhere there
                   "gnu | (hen cat)", "dog MAYBE (emu fox)", "(gnu | (hen (cat | dog))) fox",
                   "gnu | \"cat dog emu\"/3"]
FACTOR_ANCHOR_OPTIONS = ["ranker=expr('sum(hit_count)')", "ranker=expr('sum(lcs)')",
                         "ranker=expr('top(min_hit_pos)')"] + FACTOR_PHRASE_OPTIONS
# Queries whose factors differ on purpose: one example of each kind.
FACTOR_EXTRA = [
    ("gnu", "ranker=expr('sum(max_window_hits(3))')"),
    ("gnu hen", "ranker=expr('sum(lccs)')"),
    ("-dog cat", "ranker=expr('max_lcs')"),
    ("dog gnu hen", "ranker=expr('sum(min_best_span_pos)')"),
    ("-dog cat", "ranker=expr('query_word_count')"),
    ("hen NEAR/2 cat", "ranker=expr('sum(hit_count)')"),
    ("emu NEAR/2 fox | cat", "ranker=expr('doc_word_count')"),
    ("cat cat", "ranker=wordcount"),
    ("gnu | (hen << cat)", "ranker=expr('sum(hit_count)')"),
    ("gnu | (hen -cat)", "ranker=expr('sum(hit_count)')"),
    ("gnu | (^hen MAYBE cat)", "ranker=expr('sum(hit_count)')"),
    ("gnu | \"cat dog emu\"/2", "ranker=expr('sum(hit_count)')"),
]


def factor_set(seed=2026, n_rows=40, n_queries=40):
    """Rows and queries (table k) for the ranking factors: words, OR
    lists, NOT, MAYBE and field scopes over six words, each word once in
    a query (a word the query repeats is one keyword in Manticore's
    documentation, and Sphinx 2.2.11 counts it at each place in some
    factors: FACTOR_EXTRA has that case), each query with each of
    FACTOR_OPTIONS; then FACTOR_EXTRA. Seeded: the same every run."""
    rnd = random.Random(seed)
    rows = [(" ".join(rnd.choice(FACTOR_WORDS) for _ in range(rnd.randint(1, 5))),
             " ".join(rnd.choice(FACTOR_WORDS) for _ in range(rnd.randint(0, 10)))) for _ in range(n_rows)]
    queries = []
    while len(queries) < n_queries:
        left = list(FACTOR_WORDS)
        rnd.shuffle(left)
        parts = []
        for _ in range(rnd.randint(1, 3)):
            r = rnd.random()
            if r < 0.15:
                parts.append("(%s | %s)" % (left.pop(), left.pop()))
            elif r < 0.22:
                parts.append("-" + left.pop())
            elif r < 0.32:
                parts.append("@title " + left.pop())
            elif r < 0.38:
                parts.append("%s MAYBE %s" % (left.pop(), left.pop()))
            else:
                parts.append(left.pop())
        if all(x.startswith("-") for x in parts):
            parts.append(left.pop())
        q = " ".join(parts)
        if rnd.random() < 0.25:
            q = " | ".join(x for x in parts if not x.startswith("-")) or left.pop()
        if q not in queries:
            queries.append(q)
    # (a NOT's word counts in Sphinx's max_lcs: FACTOR_EXTRA has that case)
    pairs = [(q, o) for q in queries for o in FACTOR_OPTIONS
             if not ("-" in q and ("max_lcs" in o or "matchany" in o))]
    # phrases, proximity phrases, '<<' and NEAR, alone or with a word
    phrases = []
    while len(phrases) < n_queries // 2:
        a, b, c = rnd.sample(FACTOR_WORDS, 3)
        x = rnd.choice(['"%s %s"' % (a, b), '"%s %s"~3' % (a, b), "%s << %s" % (a, b),
                        "%s NEAR/2 %s" % (a, b), '@title "%s %s"' % (a, b)])
        q = rnd.choice([x, "%s %s" % (x, c), "(%s) | %s" % (x, c)])
        if q not in phrases:
            phrases.append(q)
    pairs += [(q, o) for q in phrases for o in FACTOR_PHRASE_OPTIONS]
    pairs += [(q, o) for q in FACTOR_ANCHORED for o in FACTOR_ANCHOR_OPTIONS] + FACTOR_EXTRA
    return rows, pairs


def snippet_set(seed=2026, n=80):
    """Texts and queries for CALL SNIPPETS (on table k): random texts of
    FACTOR_WORDS and queries of every operator but NOT (Sphinx 2.2.11
    marks a NOT's words: SNIPPET_EXTRA has that case). Seeded."""
    rnd = random.Random(seed)
    out = []
    for _ in range(n):
        text = " ".join(rnd.choice(FACTOR_WORDS) for _ in range(rnd.randint(3, 14)))
        a, b, c = rnd.sample(FACTOR_WORDS, 3)
        q = rnd.choice([a, "%s %s" % (a, b), "%s | %s" % (a, b), '"%s %s"' % (a, b), '"%s %s"~2' % (a, b),
                        "%s << %s" % (a, b), "%s NEAR/2 %s" % (a, b), a[:2] + "*", "%s MAYBE %s" % (a, b),
                        '"%s %s %s"/2' % (a, b, c), "@title %s" % a, "^%s" % a, "%s$" % a])
        out.append((text, q))
    return out + SNIPPET_EXTRA


SNIPPET_EXTRA = [("fox gnu emu gnu fox", "gnu -emu")]


def snippet_marks(cur, table, text, query):
    """The places (word indexes) CALL SNIPPETS marks in text, or 'error'."""
    try:
        cur.execute("CALL SNIPPETS(%%s, '%s', %%s, 0 AS limit)" % table, (text, query))
        snippet = cur.fetchall()[0][0]
    except Exception:  # a refusal: compared as such
        return "error"
    marks, inside, k = [], False, 0
    for tok in re.findall(r"<b>|</b>|\w+", snippet):
        if tok in ("<b>", "</b>"):
            inside = tok == "<b>"
            continue
        if inside:
            marks.append(k)
        k += 1
    return marks


def weights(cur, table, text, option):
    """Sorted (id, WEIGHT()) pairs, or 'error' when the engine refuses."""
    try:
        cur.execute("SELECT id, WEIGHT() FROM %s WHERE MATCH(%%s) LIMIT 1000 OPTION %s" % (table, option), (text,))
        return sorted((r[0], round(float(r[1]), 3)) for r in cur.fetchall())
    except Exception:  # a refusal: compared as such
        return "error"


def weight_diff(a, b, n=3):
    """The first n rows whose WEIGHT() differs, as 'id: weight' in each
    engine ('-' where it lacks the row)."""
    wa, wb = dict(a), dict(b)
    rows = [i for i in sorted(set(wa) | set(wb)) if wa.get(i) != wb.get(i)]
    more = " …" if len(rows) > n else ""

    def show(w):
        return ", ".join("%d: %s" % (i, "-" if i not in w else "%g" % w[i]) for i in rows[:n]) + more
    return show(wa), show(wb)


def ids(cur, table, text):
    """Sorted ids, or 'error' when the engine refuses the query."""
    try:
        cur.execute("SELECT id FROM %s WHERE MATCH(%%s) LIMIT 1000" % table, (text,))
        return sorted(r[0] for r in cur.fetchall())
    except Exception:  # a refusal: compared as such
        return "error"


def load(cur, table, rows):
    for i, (a, b) in enumerate(rows):
        cur.execute("INSERT INTO %s (id, title, body, pad) VALUES (%%s, %%s, %%s, 0)" % table, (i + 1, a, b))


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--loupe", default=os.path.join(REPO, "build", "loupe"))
    ap.add_argument("--searchd", default=shutil.which("searchd") or "/usr/bin/searchd")
    args = ap.parse_args(argv)
    tmp = tempfile.mkdtemp(prefix="loupe-parity-")
    os.makedirs(os.path.join(tmp, "loupe"))
    os.makedirs(os.path.join(tmp, "sphinx"))
    servers = {"loupe": LoupeServer(os.path.join(tmp, "loupe"), args.loupe),
               "sphinx": SphinxServer(os.path.join(tmp, "sphinx"), args.searchd, "sphinx", SPHINX_INDEX)}
    sets = [("t", ROWS, [q for q in QUERIES.splitlines() if q.strip()]),
            ("n", NESTED_ROWS, [q for q in NESTED_QUERIES.splitlines() if q.strip()]),
            ("s", STEMMED_ROWS, [q for q in STEMMED_QUERIES.splitlines() if q.strip()]),
            ("r",) + near_set(),
            ("p", WINDOW_ROWS, [q for q in WINDOW_QUERIES.splitlines() if q.strip()]),
            ("q",) + bool_set(),
            ("b", BLEND_ROWS, [q for q in BLEND_QUERIES.splitlines() if q.strip()]),
            ("k",) + factor_set()]
    sets += [(n, ANALYSIS_ROWS, [q for q in ANALYSIS_QUERIES.splitlines() if q.strip()]) for n in ANALYSIS_SPHINX]
    sets += [("xp", PHONETIC_ROWS, [q for q in PHONETIC_QUERIES.splitlines() if q.strip()])]
    sets += [("xm", METAPHONE_ROWS, [q for q in METAPHONE_QUERIES.splitlines() if q.strip()])]
    for name, lines in (("stopwords", ANALYSIS_STOPWORDS), ("exceptions", ANALYSIS_EXCEPTIONS),
                        ("wordforms", ANALYSIS_WORDFORMS), ("blendforms", BLEND_WORDFORMS)):
        with open(os.path.join(tmp, "sphinx", name + ".txt"), "w") as f:
            f.write("\n".join(lines) + "\n")
    results = []
    try:
        curs = {}
        for name, srv in servers.items():
            srv.start()
            curs[name] = connect(srv.port).cursor()
        for table, rows, queries in sets:
            curs["loupe"].execute("CREATE TABLE %s (title TEXT, body TEXT, pad INT) %s"
                                  % (table, OPTIONS[table]))
            for cur in curs.values():
                load(cur, table, rows)
            for q in queries:
                if isinstance(q, tuple):
                    # (MATCH text, OPTION): WEIGHT() of each row
                    results.append((table, "%s OPTION %s" % q, weights(curs["loupe"], table, *q),
                                    weights(curs["sphinx"], table, *q)))
                    continue
                results.append((table, q, ids(curs["loupe"], table, q), ids(curs["sphinx"], table, q)))
        # highlighting: which words CALL SNIPPETS marks, with table k's analysis
        for text, q in snippet_set():
            results.append(("k", "CALL SNIPPETS('%s', '%s')" % (text, q), snippet_marks(curs["loupe"], "k", text, q),
                            snippet_marks(curs["sphinx"], "k", text, q)))
        versions = {name: srv.version() for name, srv in servers.items()}
    finally:
        for srv in servers.values():
            srv.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    same = [r for r in results if r[2] == r[3]]
    differ = [r for r in results if r[2] != r[3]]
    unexpected = [r for r in differ if r[1] not in EXPECTED]
    m = machine()
    lines = ["# MATCH syntax: loupe and Sphinx, the same rows?", "",
             "Run %s at %s on %s (%d cores):" % (utc_now(), git_revision(), m["cpu"], m["cores"]), "",
             "    " + command_line(__file__, argv), "",
             "Versions: %s; %s." % (versions["loupe"], versions["sphinx"]), "",
             "%d queries over %d small tables (bench/fulltext/parity.py has the rows and the "
             "queries; on table k, each with a ranker, the rows and their WEIGHT(), and the words "
             "CALL SNIPPETS marks): the same "
             "(or both refuse) for **%d**, different for %d, of which %d on purpose and **%d** not." % (len(results), len(sets), len(same), len(differ),
                                              len(differ) - len(unexpected), len(unexpected)), "",
             "| query | loupe | Sphinx | why |", "|---|---|---|---|"]
    for table, q, a, b in differ:
        why = EXPECTED.get(q, "**not expected**")
        if " OPTION " in q and isinstance(a, list) and isinstance(b, list):
            a, b = weight_diff(a, b)
        lines.append("| `%s` | %s | %s | %s |" % (q.replace("|", "\\|"), a, b, why.replace("|", "\\|")))
    lines.append("")
    write_report(OUT, lines)
    return 1 if unexpected else 0


if __name__ == "__main__":
    run_cli(main, "parity.py")
