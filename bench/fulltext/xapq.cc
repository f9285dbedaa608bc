/*
** xapq.cc — Xapian queried in process, for the full-text benchmark's
** "speed in process" table: no Python in the loop.
**
**   xapq DBDIR QUERYFILE [--k 10] [--seconds S] [--warmup N] [--hard-stop S]
**
** DBDIR is the compacted database run.py's XapianEngine built (terms with
** positions plus Z-prefixed English stems, STEM_SOME). QUERYFILE holds one
** query a line as `kind<TAB>word word ...` (run.py writes it from the same
** workload.Query as XapianEngine.compile()), and per query xapq builds
** the Xapian::Query that compile() builds, words stemmed here:
**   or      OP_OR of Z<stem(w)>           and   OP_AND of Z<stem(w)>
**   term    the single term Z<stem(w)>    phrase OP_PHRASE of the words
**   prefix  OP_WILDCARD on the word (WILDCARD_LIMIT_ERROR, combined
**           with OP_SYNONYM)
** then runs it: Enquire with BM25Weight (Xapian's defaults), get_mset(0, k),
** every document id read. Stemming and building the query are inside the
** timed loop, as analysing the MATCH text is for loupe and FTS5.
**
** Passes, markers and output: passes.h. Errors (a bad line, a Xapian
** exception) are printed and exit 1; bad arguments exit 2.
**
** Build (run.py does): g++ -O2 xapq.cc $(pkg-config --cflags --libs xapian-core)
*/
#include <xapian.h>

#include <string>
#include <vector>

#include "passes.h"

namespace {

enum class Kind { Or, And, Term, Phrase, Prefix };

struct XapQuery {
    Kind kind;
    std::vector<std::string> words;     // lower-case words, or the one prefix
};

struct XapCtx {
    Xapian::Database db;
    Xapian::Stem stem{"english"};
    Xapian::BM25Weight weight;
    std::vector<XapQuery> queries;
    unsigned k = 10;
    const BenchLines *pLines = nullptr;
};

// Parses `kind<TAB>words`; false when the line is not one.
bool parse_line(const char *z, XapQuery *q) {
    const char *zTab = strchr(z, '\t');
    if (!zTab) return false;
    std::string kind(z, (size_t)(zTab - z));
    if (kind == "or") q->kind = Kind::Or;
    else if (kind == "and") q->kind = Kind::And;
    else if (kind == "term") q->kind = Kind::Term;
    else if (kind == "phrase") q->kind = Kind::Phrase;
    else if (kind == "prefix") q->kind = Kind::Prefix;
    else return false;
    for (const char *p = zTab + 1; *p;) {
        while (*p == ' ') p++;
        const char *zEnd = p;
        while (*zEnd && *zEnd != ' ') zEnd++;
        if (zEnd > p) q->words.emplace_back(p, (size_t)(zEnd - p));
        p = zEnd;
    }
    size_t n = q->words.size();
    return n > 0 && ((q->kind != Kind::Term && q->kind != Kind::Prefix) || n == 1);
}

Xapian::Query build(XapCtx *x, const XapQuery &q) {
    std::vector<Xapian::Query> sub;
    switch (q.kind) {
    case Kind::Or:
    case Kind::And:
        for (const std::string &w : q.words) sub.emplace_back("Z" + x->stem(w));
        return Xapian::Query(q.kind == Kind::Or ? Xapian::Query::OP_OR : Xapian::Query::OP_AND, sub.begin(),
                             sub.end());
    case Kind::Term:
        return Xapian::Query("Z" + x->stem(q.words[0]));
    case Kind::Phrase:
        for (const std::string &w : q.words) sub.emplace_back(w);
        return Xapian::Query(Xapian::Query::OP_PHRASE, sub.begin(), sub.end());
    case Kind::Prefix:
        return Xapian::Query(Xapian::Query::OP_WILDCARD, q.words[0], 0, Xapian::Query::WILDCARD_LIMIT_ERROR,
                             Xapian::Query::OP_SYNONYM);
    }
    return Xapian::Query();
}

// Runs query i; its rows, or -1 (printed).
long xapq_one(void *ctx, int i) {
    XapCtx *x = static_cast<XapCtx *>(ctx);
    try {
        Xapian::Enquire enq(x->db);
        enq.set_weighting_scheme(x->weight);
        enq.set_query(build(x, x->queries[(size_t)i]));
        Xapian::MSet m = enq.get_mset(0, x->k);
        long nRow = 0;
        for (Xapian::MSetIterator it = m.begin(); it != m.end(); ++it) {
            (void)*it;  // the document id, as a client reads it
            nRow++;
        }
        return nRow;
    } catch (const Xapian::Error &e) {
        fprintf(stderr, "xapq: query %d failed: %s\n  %.300s\n", i + 1, e.get_description().c_str(),
                x->pLines->az[i]);
        return -1;
    }
}

int usage() {
    fprintf(stderr, "usage: xapq DBDIR QUERYFILE [--k 10] [--seconds S] [--warmup N] [--hard-stop S]\n");
    return 2;
}

}  // namespace

int main(int argc, char **argv) {
    if (argc < 3) return usage();
    BenchPassCfg cfg = {1.0, 0, 0};
    int k = 10;
    for (int i = 3; i < argc;) {
        if (!bench_common_opt(argc, argv, &i, &cfg, &k)) return usage();
    }
    if (!bench_cfg_ok(&cfg, k)) return usage();
    BenchLines list;
    if (bench_read_lines("xapq", argv[2], &list) != 0) return 1;
    int rc = 1;
    try {
        XapCtx x;
        x.db = Xapian::Database(argv[1]);
        x.k = (unsigned)k;
        x.pLines = &list;
        rc = 0;
        for (int i = 0; i < list.n && rc == 0; i++) {
            XapQuery q;
            if (!parse_line(list.az[i], &q)) {
                fprintf(stderr, "xapq: %s, query %d: expected `or|and|term|phrase|prefix<TAB>words`\n", argv[2],
                        i + 1);
                rc = 1;
            }
            x.queries.push_back(std::move(q));
        }
        if (rc == 0) rc = bench_passes("xapq", &cfg, list.n, xapq_one, &x);
    } catch (const Xapian::Error &e) {
        fprintf(stderr, "xapq: %s: %s\n", argv[1], e.get_description().c_str());
        rc = 1;
    }
    bench_free_lines(&list);
    return rc;
}
