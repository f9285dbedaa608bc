/*
** loupe-load — a load generator over the MySQL protocol, after Manticore's
** manticore-load. It runs set-up statements once, then inserts --total
** generated rows from --threads connections, --batch-size rows per
** statement, and reports throughput, statement latency and the server's
** CPU use. docs/loupe-load.md is the user's guide; this comment is the
** design.
**
**   loupe-load [--host H] [--port P] [--user U] [--password P]
**              [--drop] [--init="SQL[; SQL...]"]...
**              [--load="INSERT INTO t (...) VALUES (<patterns>)" --total=N
**               [--threads=T] [--batch-size=B] [--seed=S] [--ignore-errors]
**               [--server-pid=PID]] [--quiet] [--json]
**
** Template. --load is one INSERT or REPLACE with exactly one VALUES tuple.
** It is cut once, at start, into prefix ("INSERT ... VALUES "), the tuple
** and a suffix (blank or ';', dropped). The tuple becomes a list of
** segments: literal text and patterns. A pattern is '<' + a name of
** letters + ('/' or '>'), up to the next '>' (increment, int, float,
** string, text, array_float; an unknown name or bad arguments is an
** error naming the byte offset in --load). `<<` is a literal '<'. A
** statement of rows [a, b) is prefix + tuple(a) + ',' + ... + tuple(b-1).
**
** Determinism. Row r (0-based, 0 .. total-1) draws every random value from
** its own generator, seeded from (seed, r) alone, in the order the
** patterns appear in the tuple, so row r's text never depends on the
** thread that sends it, the batch size or the thread count. Statements
** are numbered 0 .. ceil(total/batch)-1 and handed to the threads from one
** atomic counter (whoever is free takes the next), so the set of rows sent
** is always the same; only their arrival order varies. Without --seed a
** seed is taken from the clock and reported, so a run can be repeated.
**
** Text. <text/MIN/MAX> draws words from a 50,000-word vocabulary with a
** Zipf-Mandelbrot law, P(rank k) ~ 1 / (k + 0.5) (k from 1): about 6% of
** the words are "the", as in English prose. The first ranks are 2,132
** real English words (the most common first); the rest are pronounceable
** synthesized words (onset + vowel + optional coda syllables, two or three
** of them, made from a fixed hash of the rank), skipping any that repeats
** an earlier word, so the vocabulary is the same on every machine.
**
** Measurement. Each thread has its own connection, opened before the clock
** starts. A statement's latency is mysql_real_query() to its reply, on
** CLOCK_MONOTONIC (generating the statement is not timed); every sample is
** kept, and percentiles are exact (nearest rank over the sorted samples).
** The run's time is from the moment all threads are connected to the
** moment the last one is done. The server's CPU time is utime + stime of
** /proc/<pid>/stat before and after; the pid is --server-pid, or the
** process with a listening TCP socket on --port (/proc/net/tcp{,6} gives
** the socket's inode, /proc/<pid>/fd/ the process holding it) when --host
** is this machine. When neither works the report says n/a.
**
** Errors. The first statement the server refuses stops the run: every
** thread finishes the statement it is sending and stops; the error is
** printed with its statement and row numbers; exit 1. With
** --ignore-errors refused statements are counted and the run goes on (a
** lost connection still stops it).
**
** Exit status: 0 on success, 1 on a connection, server or run error, 2 on
** bad arguments or a bad --load template.
**
** Threads: main parses, runs --drop/--init on its own connection, starts
** the load threads, then draws the progress bar until they are done.
** Shared between threads: the read-only template and vocabulary, the
** statement counter, the row counter (progress) and the first-error
** record (under gErrMutex); everything else is per thread.
*/
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <mysql.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/error.h"
#include "util/hashmap.h"
#include "util/strbuf.h"

#define LL_VOCAB 50000          /* words in the <text> vocabulary */
#define LL_ZIPF_Q 0.5           /* Zipf-Mandelbrot offset: P(k) ~ 1/(k+q) */
#define LL_MAX_LEN 1000000      /* largest <string> length / <text> word count */
#define LL_MAX_DIMS 65536       /* largest <array_float> dimension (as knn_dims) */
#define LL_MAX_THREADS 1024

/* The most common English words, most frequent first: ranks 1..2132 of
** the <text> vocabulary. */
static const char zEnglish[] =
    "the of and to a in is it you that he was for on are with as i his they be at one have this from "
    "or had by not word but what some we can out other were all there when up use your how said an "
    "each she which do their time if will way about many then them write would like so these her "
    "long make thing see him two has look more day could go come did number sound no most people my "
    "over know water than call first who may down side been now find any new work part take get "
    "place made live where after back little only round man year came show every good me give our "
    "under name very through just form sentence great think say help low line differ turn cause much "
    "mean before move right boy old too same tell does set three want air well also play small end "
    "put home read hand port large spell add even land here must big high such follow act why ask "
    "men change went light kind off need house picture try us again animal point mother world near "
    "build self earth father head stand own page should country found answer school grow study still "
    "learn plant cover food sun four between state keep eye never last let thought city tree cross "
    "farm hard start might story saw far sea draw left late run while press close night real life "
    "few north open seem together next white children begin got walk example ease paper group always "
    "music those both mark often letter until mile river car feet care second book carry took "
    "science eat room friend began idea fish mountain stop once base hear horse cut sure watch color "
    "face wood main enough plain girl usual young ready above ever red list though feel talk bird "
    "soon body dog family direct pose leave song measure door product black short numeral class wind "
    "question happen complete ship area half rock order fire south problem piece told knew pass "
    "since top whole king space heard best hour better true during hundred five remember step early "
    "hold west ground interest reach fast verb sing listen six table travel less morning ten simple "
    "several vowel toward war lay against pattern slow center love person money serve appear road "
    "map rain rule govern pull cold notice voice unit power town fine certain fly fall lead cry dark "
    "machine note wait plan figure star box noun field rest correct able pound done beauty drive "
    "stood contain front teach week final gave green oh quick develop ocean warm free minute strong "
    "special mind behind clear tail produce fact street inch multiply nothing course stay wheel full "
    "force blue object decide surface deep moon island foot system busy test record boat common gold "
    "possible plane stead dry wonder laugh thousand ago ran check game shape equate hot miss brought "
    "heat snow tire bring yes distant fill east paint language among grand ball yet wave drop heart "
    "am present heavy dance engine position arm wide sail material size vary settle speak weight "
    "general ice matter circle pair include divide syllable felt perhaps pick sudden count square "
    "reason length represent art subject region energy hunt probable bed brother egg ride cell "
    "believe fraction forest sit race window store summer train sleep prove lone exercise wall catch "
    "mount wish sky board joy winter sat written wild instrument kept glass grass cow job edge sign "
    "visit past soft fun bright gas weather month million bear finish happy hope flower clothe "
    "strange gone jump baby eight village meet root buy raise solve metal whether push seven "
    "paragraph third shall held hair describe cook floor either result burn hill safe cat century "
    "consider type law bit coast copy phrase silent tall sand soil roll temperature finger industry "
    "value fight lie beat excite natural view sense ear else quite broke case middle kill son lake "
    "moment scale loud spring observe child straight consonant nation dictionary milk speed method "
    "organ pay age section dress cloud surprise quiet stone tiny climb cool design poor lot "
    "experiment bottom key iron single stick flat twenty skin smile crease hole trade melody trip "
    "office receive row mouth exact symbol die least trouble shout except wrote seed tone join "
    "suggest clean break lady yard rise bad blow oil blood touch grew cent mix team wire cost lost "
    "brown wear garden equal sent choose fell fit flow fair bank collect save control decimal gentle "
    "woman captain practice separate difficult doctor please protect noon whose locate ring "
    "character insect caught period indicate radio spoke atom human history effect electric expect "
    "crop modern element hit student corner party supply bone rail imagine provide agree thus "
    "capital chair danger fruit rich thick soldier process operate guess necessary sharp wing create "
    "neighbor wash bat rather crowd corn compare poem string bell depend meat rub tube famous dollar "
    "stream fear sight thin triangle planet hurry chief colony clock mine tie enter major fresh "
    "search send yellow gun allow print dead spot desert suit current lift rose continue block chart "
    "hat sell success company subtract event particular deal swim term opposite wife shoe shoulder "
    "spread arrange camp invent cotton born determine quart nine truck noise level chance gather "
    "shop stretch throw shine property column molecule select wrong gray repeat require broad "
    "prepare salt nose plural anger claim continent oxygen sugar death pretty skill women season "
    "solution magnet silver thank branch match suffix especially fig afraid huge sister steel "
    "discuss forward similar guide experience score apple bought led pitch coat mass card band rope "
    "slip win dream evening condition feed tool total basic smell valley nor double seat arrive "
    "master track parent shore division sheet substance favor connect post spend chord fat glad "
    "original share station dad bread charge proper bar offer segment slave duck instant market "
    "degree populate chick dear enemy reply drink occur support speech nature range steam motion "
    "path liquid log meant quotient teeth shell neck government program business issue service "
    "member community president information others health research teacher education policy stock "
    "price rate growth report data model network software computer internet user account security "
    "server database query index vector memory storage file document client request response error "
    "message version release update feature project development management analysis performance "
    "quality customer economy resource technology medicine patient disease treatment hospital court "
    "justice police crime attack army military weapon election vote campaign candidate senator "
    "congress county avenue building apartment kitchen bedroom beach autumn holiday weekend birthday "
    "wedding marriage husband daughter uncle aunt cousin stranger guest partner colleague manager "
    "director officer employee worker professor nurse lawyer engineer artist writer author reader "
    "actor singer player coach fan audience public population culture society religion church faith "
    "spirit heaven soul brain tooth tongue elbow wrist leg knee ankle toe chest stomach however "
    "although therefore because without within upon across along around beyond inside outside "
    "throughout whereas already almost anyway certainly clearly easily exactly finally generally "
    "immediately indeed instead mainly maybe merely nearly obviously possibly probably quickly "
    "quietly rarely really recently seriously simply slowly suddenly surely usually active actual "
    "alive alone angry annual anxious available aware beautiful brief calm careful central cheap "
    "chemical civil classic comfortable commercial complex concerned confident conscious "
    "conservative constant cultural curious dangerous democratic dependent digital dirty domestic "
    "eager eastern economic educational effective efficient elderly electrical emotional empty "
    "entire environmental essential ethnic everyday evident exciting existing expensive extra "
    "extreme familiar federal female financial firm foreign formal former friendly frozen funny "
    "global grateful guilty handsome healthy helpful historical honest hungry ideal ill illegal "
    "important impossible impressive independent individual industrial initial inner innocent "
    "intense internal international irrelevant joint junior known latter legal likely limited "
    "literary living local logical loose lovely loyal lucky mad male mental mere mild minor mobile "
    "moral narrow national native negative nervous neutral nice normal obvious official online "
    "ordinary organic outer overall painful pale parallel personal physical plastic pleasant polite "
    "political popular positive potential powerful practical pregnant previous primary private "
    "professional proud psychological pure rapid rare raw relevant religious remote responsible "
    "rough royal rural sad scared secret senior sensitive serious severe sexual silly slight smart "
    "social solid sorry spare specific spiritual stable standard steady strict stupid successful "
    "sufficient suitable sweet technical terrible thirsty tight tired tough traditional typical ugly "
    "unable unfair unhappy unique unknown unlikely upper upset urban useful useless valuable various "
    "violent visible vital weak wealthy weird wet wooden worried worth accept achieve admit afford "
    "aim apply approach argue assume attempt attend avoid beg behave belong bend bite blame bother "
    "breathe brush calculate cancel celebrate chase cheat chew comment compete complain concentrate "
    "confirm confuse consist construct contribute convince cope crash criticize cure damage deliver "
    "deny deserve destroy detect disagree disappear discover dislike dive doubt drag earn educate "
    "eliminate embrace emerge encourage enable engage enjoy ensure entertain escape establish "
    "estimate evaluate examine exist expand explain explore express extend fail fold forgive freeze "
    "gain generate greet grab hang hate hide hire hug identify ignore illustrate implement improve "
    "increase inform injure insist install intend introduce invest investigate invite involve kick "
    "kiss knock lack launch lend limit link maintain manage marry mention monitor negotiate obtain "
    "occupy offend organize owe pack perform persuade pour pray predict prefer pretend prevent "
    "promise promote propose publish punish purchase qualify recognize recommend reduce reflect "
    "refuse regret reject relax rely remain remove rent repair replace rescue reserve resist respond "
    "restore retire reveal review rid ruin satisfy scream seek seize shake shut sink smoke sneeze "
    "spoil steal stir strike struggle submit succeed suffer suppose survive suspect swallow swear "
    "swing tap taste tear tend threaten tolerate translate trust twist undergo upgrade urge vanish "
    "wake wander warn weigh whisper wipe worry wrap yell ability absence academy accident "
    "achievement acid addition address advantage adventure advertisement advice affair agency agent "
    "agreement airport alarm album alcohol ambition amount angle anniversary announcement anxiety "
    "appeal appearance appointment argument arrival article aspect assignment assistant association "
    "atmosphere attention attitude attraction authority average award background balance balloon "
    "bandage basket bathroom battery battle beer behavior belief benefit bicycle bill biology birth "
    "blanket boss bottle boundary brand bridge budget bug burden bus butter button cabinet cable "
    "cake calendar camera cancer candle capacity career carpet castle category ceiling celebration "
    "challenge champion channel chapter charity cheese chemistry chicken chocolate cigarette cinema "
    "circumstance citizen climate coffee coin collection college comedy commission commitment "
    "committee communication comparison competition complaint concept concern concert conclusion "
    "conference confidence conflict connection consequence construction contact context contract "
    "contrast contribution conversation cookie cottage council counter courage creature credit "
    "crisis criticism cup curtain cycle deadline debate debt decade decision definition delivery "
    "demand department deposit depression description desk detail device diamond diet difference "
    "dimension dinner direction disaster discipline discount discovery discussion dish disk distance "
    "distribution drawer drama driver economics editor efficiency effort elevator emergency emotion "
    "emphasis employer encounter enthusiasm entrance environment equipment essay estate evidence "
    "examination excitement exhibition existence expansion expectation expense explanation "
    "expression extent failure fashion fault feedback feeling festival fiction finance flight flavor "
    "football fortune foundation framework freedom frequency fuel function funeral furniture gallery "
    "gap garage generation gift goal grade grandfather grocery guarantee guitar habit hall hardware "
    "heritage highway hobby honey horror host hotel household housing hunger illness image "
    "imagination impact implication importance impression improvement incident income independence "
    "indication inflation influence initiative injury inspection instance institution instruction "
    "insurance intention interaction interview introduction invention investment invitation item "
    "jacket journey judgment juice keyboard kingdom knife knowledge label laboratory ladder "
    "landscape laptop leadership leather lecture legislation leisure lesson library license "
    "lifestyle literature loan location logic lunch luxury magazine maintenance majority manner "
    "manufacturer marketing meal meaning measurement media medium membership menu mess midnight "
    "mirror mission mistake mixture mode mood motor movie murder muscle museum mystery negotiation "
    "newspaper nobody novel obligation occasion operation opinion opportunity option orange "
    "organization outcome oven owner package pain painting panic passenger passion password patience "
    "payment penalty pension percentage perception permission personality perspective phase "
    "philosophy phone photo physics piano pie pilot pizza platform pleasure pocket poet poetry "
    "politics pollution pool popularity portion possession possibility potato poverty preference "
    "preparation presence presentation pressure priority prison procedure profession profit progress "
    "promotion proposal prospect protection psychology publication punishment purpose quantity queen "
    "ratio reaction reality recipe recognition recommendation recording reflection refrigerator "
    "relation relationship reputation requirement reservation resident resolution respect "
    "responsibility restaurant revenue revolution reward rhythm risk rival routine salad salary "
    "sample satisfaction scene schedule scheme screen secretary sector selection sequence session "
    "setting shelter shift shirt shock signature significance silence situation sketch soup source "
    "speaker specialist sport staff stage statement status storm strategy strength stress structure "
    "studio style suggestion supermarket surgery survey sympathy symptom target task tax technique "
    "teaching telephone television tennis tension territory theme theory ticket tissue title topic "
    "tourist tower tradition traffic tragedy transport treasure trend trial truth tune union "
    "university vacation variation variety vegetable vehicle victim video virus vision visitor "
    "volume volunteer wallet warning wealth website welcome whale wisdom witness youth zone ";

/* ------------------------------------------------------------------ RNG */

/* splitmix64's output function: a bijective mix of 64 bits. */
static uint64_t ll_mix(uint64_t x) {
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* A splitmix64 generator: one per row, see "Determinism" at the top. */
typedef struct Rng {
    uint64_t s;             /* state, advanced by the golden gamma per draw */
} Rng;

static void rng_for_row(Rng *r, uint64_t seed, uint64_t iRow) {
    r->s = ll_mix(seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull) ^ ll_mix(iRow + 0xD1B54A32D192ED03ull);
}

static uint64_t rng_next(Rng *r) {
    r->s += 0x9E3779B97F4A7C15ull;
    return ll_mix(r->s);
}

/* Uniform in [0, n), n > 0, without modulo bias (Lemire's method). */
static uint64_t rng_below(Rng *r, uint64_t n) {
    __uint128_t m = (__uint128_t)rng_next(r) * n;
    uint64_t lo = (uint64_t)m;
    if (lo < n) {
        uint64_t t = (0 - n) % n;
        while (lo < t) {
            m = (__uint128_t)rng_next(r) * n;
            lo = (uint64_t)m;
        }
    }
    return (uint64_t)(m >> 64);
}

/* Uniform in [lo, hi], lo <= hi, any int64 range. */
static int64_t rng_range(Rng *r, int64_t lo, int64_t hi) {
    uint64_t span = (uint64_t)hi - (uint64_t)lo + 1;
    if (span == 0) return (int64_t)rng_next(r);       /* the whole int64 range */
    return (int64_t)((uint64_t)lo + rng_below(r, span));
}

/* Uniform in [0, 1). */
static double rng_unit(Rng *r) {
    return (double)(rng_next(r) >> 11) * 0x1.0p-53;
}

/* ----------------------------------------------------------- vocabulary */

/* The <text> vocabulary: LL_VOCAB distinct lower-case words, by rank. */
typedef struct Vocab {
    char *zBuf;             /* every word, NUL-separated */
    uint32_t *aOff;         /* nWord offsets into zBuf */
    uint8_t *aLen;          /* nWord lengths */
    double *aCdf;           /* aCdf[k] = P(rank <= k), aCdf[nWord-1] == 1 */
    uint32_t nWord;
} Vocab;

static void vocab_free(Vocab *v) {
    free(v->zBuf);
    free(v->aOff);
    free(v->aLen);
    free(v->aCdf);
    memset(v, 0, sizeof *v);
}

/* Syllable parts of the synthesized words. No two-letter onset starts with
** a letter that is also a coda, so a word splits into syllables one way
** only: different syllable lists give different words. */
static const char *const azOnset[] = {"b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t",
                                      "v", "w", "z", "br", "cl", "dr", "fl", "gr", "pl", "st", "tr", "sh", "ch", "th"};
static const char *const azVowel[] = {"a", "e", "i", "o", "u", "ai", "ea", "oo", "ou"};
static const char *const azCoda[] = {"", "", "", "n", "r", "l", "m"};
#define NARR(a) (sizeof(a) / sizeof((a)[0]))

/* Adds the n bytes at z as the next word unless it is already there. The
** buffer was sized for the worst case, so keys stay where they are. */
static int vocab_add(Vocab *v, HashMap *pSeen, size_t *pnBuf, const char *z, size_t n) {
    if (n == 0 || n > 255 || hmap_get(pSeen, z, n)) return LP_OK;
    char *zDst = v->zBuf + *pnBuf;
    memcpy(zDst, z, n);
    zDst[n] = 0;
    if (hmap_put(pSeen, zDst, n, zDst, NULL)) return LP_NOMEM;
    v->aOff[v->nWord] = (uint32_t)*pnBuf;
    v->aLen[v->nWord] = (uint8_t)n;
    v->nWord++;
    *pnBuf += n + 1;
    return LP_OK;
}

static int vocab_build(Vocab *v, LpError *err) {
    memset(v, 0, sizeof *v);
    /* Synthesized words are at most 3 * (2 + 2 + 1) = 15 bytes. */
    size_t cap = sizeof zEnglish + (size_t)LL_VOCAB * 16;
    v->zBuf = malloc(cap);
    v->aOff = malloc(sizeof *v->aOff * LL_VOCAB);
    v->aLen = malloc(sizeof *v->aLen * LL_VOCAB);
    v->aCdf = malloc(sizeof *v->aCdf * LL_VOCAB);
    HashMap seen;
    hmap_init(&seen);
    int rc = (v->zBuf && v->aOff && v->aLen && v->aCdf) ? LP_OK : LP_NOMEM;
    size_t nBuf = 0;
    for (const char *z = zEnglish; rc == LP_OK && *z && v->nWord < LL_VOCAB;) {
        while (*z == ' ') z++;
        const char *zEnd = z;
        while (*zEnd && *zEnd != ' ') zEnd++;
        rc = vocab_add(v, &seen, &nBuf, z, (size_t)(zEnd - z));
        z = zEnd;
    }
    for (uint64_t k = 0; rc == LP_OK && v->nWord < LL_VOCAB; k++) {
        uint64_t h = ll_mix(k + 0x5EED);
        int nSyl = (h & 3) == 0 ? 3 : 2;            /* a quarter have three syllables */
        char zW[32];
        size_t n = 0;
        for (int i = 0; i < nSyl; i++) {
            h = ll_mix(h + (uint64_t)i + 1);
            const char *a = azOnset[h % NARR(azOnset)];
            const char *b = azVowel[(h >> 16) % NARR(azVowel)];
            const char *c = azCoda[(h >> 32) % NARR(azCoda)];
            n += (size_t)snprintf(zW + n, sizeof zW - n, "%s%s%s", a, b, c);
        }
        rc = vocab_add(v, &seen, &nBuf, zW, n);
    }
    hmap_free(&seen);
    if (rc != LP_OK) {
        vocab_free(v);
        return lp_err_set(err, LP_NOMEM, "out of memory building the <text> vocabulary");
    }
    double sum = 0;
    for (uint32_t k = 0; k < v->nWord; k++) {
        sum += 1.0 / ((double)(k + 1) + LL_ZIPF_Q);
        v->aCdf[k] = sum;
    }
    for (uint32_t k = 0; k < v->nWord; k++) v->aCdf[k] /= sum;
    v->aCdf[v->nWord - 1] = 1.0;
    return LP_OK;
}

/* A word's rank (0-based), drawn by the Zipf law: the first k with
** u < aCdf[k]. */
static uint32_t vocab_draw(const Vocab *v, Rng *r) {
    double u = rng_unit(r);
    uint32_t lo = 0, hi = v->nWord - 1;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (u < v->aCdf[mid]) hi = mid;
        else lo = mid + 1;
    }
    return lo;
}

/* ------------------------------------------------------------- template */

enum {
    SEG_LITERAL,            /* text copied as is */
    PAT_INCREMENT,          /* <increment[/START]>: START + row (START 1) */
    PAT_INT,                /* <int/MIN/MAX>: uniform integer, inclusive */
    PAT_FLOAT,              /* <float/MIN/MAX>: uniform real in [MIN, MAX) */
    PAT_STRING,             /* <string/MINLEN/MAXLEN>: random letters a-z */
    PAT_TEXT,               /* <text/MINWORDS/MAXWORDS>: Zipf-drawn words */
    PAT_ARRAY_FLOAT,        /* <array_float/DIM/MIN/MAX>: (f1,...,fDIM) */
};

typedef struct Seg {
    int kind;               /* SEG_LITERAL or a PAT_* */
    size_t iLit, nLit;      /* SEG_LITERAL: bytes in Template.zLit */
    int64_t a, b;           /* integer arguments (MIN/MAX, START, lengths) */
    double x, y;            /* float arguments (MIN/MAX) */
    int bQuote;             /* string/text outside a quoted literal: quote it */
} Seg;

/* A parsed --load statement. Read-only once parsed: shared by the threads. */
typedef struct Template {
    char *zPrefix;          /* "INSERT INTO t (...) VALUES " */
    char *zLit;             /* literal bytes of the tuple's segments */
    Seg *aSeg;              /* the tuple, in order */
    int nSeg;
    int bText;              /* some segment is a <text>: build the vocabulary */
    char zTable[256];       /* the table written to, for --drop */
} Template;

static void tmpl_free(Template *t) {
    free(t->zPrefix);
    free(t->zLit);
    free(t->aSeg);
    memset(t, 0, sizeof *t);
}

static const struct {
    const char *zName;
    int kind;
    int nArgMin, nArgMax;   /* '/'-separated arguments */
    const char *zSyntax;
} aPatDef[] = {
    {"increment", PAT_INCREMENT, 0, 1, "<increment> or <increment/START>"},
    {"int", PAT_INT, 2, 2, "<int/MIN/MAX>"},
    {"float", PAT_FLOAT, 2, 2, "<float/MIN/MAX>"},
    {"string", PAT_STRING, 2, 2, "<string/MINLEN/MAXLEN>"},
    {"text", PAT_TEXT, 2, 2, "<text/MINWORDS/MAXWORDS>"},
    {"array_float", PAT_ARRAY_FLOAT, 3, 3, "<array_float/DIM/MIN/MAX>"},
};

/* Fills err with "--load: <message> at offset N" and, on a second line,
** the text around N with a caret under it. */
static int tmpl_error(LpError *err, const char *zSql, size_t iPos, const char *zFmt, ...)
    __attribute__((format(printf, 4, 5)));
static int tmpl_error(LpError *err, const char *zSql, size_t iPos, const char *zFmt, ...) {
    char zMsg[256];
    va_list ap;
    va_start(ap, zFmt);
    vsnprintf(zMsg, sizeof zMsg, zFmt, ap);
    va_end(ap);
    size_t n = strlen(zSql);
    size_t iFrom = iPos > 30 ? iPos - 30 : 0;
    size_t nShow = n - iFrom < 70 ? n - iFrom : 70;
    char zShow[80];
    size_t k = 0;
    for (size_t i = 0; i < nShow; i++) {
        char c = zSql[iFrom + i];
        zShow[k++] = (c == '\n' || c == '\t' || c == '\r') ? ' ' : c;
    }
    zShow[k] = 0;
    return lp_err_setpos(err, LP_BADINPUT, (int64_t)iPos, "--load: at offset %zu: %s\n  %s%s\n  %*s^", iPos, zMsg,
                         iFrom ? "..." : "", zShow, (int)(iPos - iFrom + (iFrom ? 3 : 0)), "");
}

static int parse_i64(const char *z, size_t n, int64_t *p) {
    char zBuf[32];
    if (n == 0 || n >= sizeof zBuf) return 0;
    memcpy(zBuf, z, n);
    zBuf[n] = 0;
    char *zEnd;
    errno = 0;
    long long v = strtoll(zBuf, &zEnd, 10);
    if (errno || *zEnd) return 0;
    *p = v;
    return 1;
}

static int parse_f64(const char *z, size_t n, double *p) {
    char zBuf[64];
    if (n == 0 || n >= sizeof zBuf) return 0;
    memcpy(zBuf, z, n);
    zBuf[n] = 0;
    char *zEnd;
    errno = 0;
    double v = strtod(zBuf, &zEnd);
    if (errno || *zEnd || !isfinite(v)) return 0;
    *p = v;
    return 1;
}

/* Reads the pattern <...> at zSql[i] (i at '<', zSql[iEnd-1] at '>') into
** *s. The caller has checked it starts with '<' + letters + '/' or '>'. */
static int pattern_parse(const char *zSql, size_t i, size_t iEnd, Seg *s, LpError *err) {
    const char *z = zSql + i + 1;
    size_t n = iEnd - i - 2;                /* between '<' and '>' */
    size_t nName = 0;
    while (nName < n && z[nName] != '/') nName++;
    int iDef = -1;
    for (size_t d = 0; d < NARR(aPatDef); d++) {
        if (strlen(aPatDef[d].zName) == nName && strncasecmp(aPatDef[d].zName, z, nName) == 0) iDef = (int)d;
    }
    if (iDef < 0) {
        return tmpl_error(err, zSql, i,
                          "unknown pattern '%.*s' (known: <increment>, <int/MIN/MAX>, <float/MIN/MAX>, "
                          "<string/MINLEN/MAXLEN>, <text/MINWORDS/MAXWORDS>, <array_float/DIM/MIN/MAX>)",
                          (int)(iEnd - i), zSql + i);
    }
    /* Split the arguments. */
    const char *azArg[4];
    size_t anArg[4];
    int nArg = 0;
    for (size_t k = nName; k < n;) {
        size_t e = k + 1;
        while (e < n && z[e] != '/') e++;
        if (nArg == 4) { nArg++; break; }
        azArg[nArg] = z + k + 1;
        anArg[nArg] = e - k - 1;
        nArg++;
        k = e;
    }
    const char *zSyn = aPatDef[iDef].zSyntax;
    const char *zPat = zSql + i;
    int nPat = (int)(iEnd - i);
    if (nArg < aPatDef[iDef].nArgMin || nArg > aPatDef[iDef].nArgMax) {
        return tmpl_error(err, zSql, i, "pattern '%.*s' has %d argument%s: expected %s", nPat, zPat, nArg,
                          nArg == 1 ? "" : "s", zSyn);
    }
    memset(s, 0, sizeof *s);
    s->kind = aPatDef[iDef].kind;
    switch (s->kind) {
    case PAT_INCREMENT:
        s->a = 1;
        if (nArg == 1 && !parse_i64(azArg[0], anArg[0], &s->a)) {
            return tmpl_error(err, zSql, i, "pattern '%.*s': START is not an integer: expected %s", nPat, zPat, zSyn);
        }
        break;
    case PAT_INT:
    case PAT_STRING:
    case PAT_TEXT:
        if (!parse_i64(azArg[0], anArg[0], &s->a) || !parse_i64(azArg[1], anArg[1], &s->b)) {
            return tmpl_error(err, zSql, i, "pattern '%.*s': arguments must be integers: expected %s", nPat, zPat,
                              zSyn);
        }
        if (s->a > s->b) {
            return tmpl_error(err, zSql, i, "pattern '%.*s': the minimum is larger than the maximum", nPat, zPat);
        }
        if (s->kind != PAT_INT && (s->a < 0 || s->b > LL_MAX_LEN)) {
            return tmpl_error(err, zSql, i, "pattern '%.*s': lengths must be between 0 and %d", nPat, zPat,
                              LL_MAX_LEN);
        }
        break;
    case PAT_FLOAT:
    case PAT_ARRAY_FLOAT: {
        int o = s->kind == PAT_ARRAY_FLOAT;
        if (o && (!parse_i64(azArg[0], anArg[0], &s->a) || s->a < 1 || s->a > LL_MAX_DIMS)) {
            return tmpl_error(err, zSql, i, "pattern '%.*s': DIM must be an integer from 1 to %d", nPat, zPat,
                              LL_MAX_DIMS);
        }
        if (!parse_f64(azArg[o], anArg[o], &s->x) || !parse_f64(azArg[o + 1], anArg[o + 1], &s->y)) {
            return tmpl_error(err, zSql, i, "pattern '%.*s': MIN and MAX must be finite numbers: expected %s", nPat,
                              zPat, zSyn);
        }
        if (s->x > s->y || !isfinite(s->y - s->x)) {
            return tmpl_error(err, zSql, i, "pattern '%.*s': the minimum is larger than the maximum", nPat, zPat);
        }
        break;
    }
    }
    return LP_OK;
}

/* Length of the pattern starting at z[i] == '<' (through its '>'), 0 when
** z[i] does not start a pattern ('<' not followed by a letter and then
** letters/'_' up to '/' or '>'), or (size_t)-1 when it starts one that does
** not end properly. */
static size_t pattern_len(const char *z, size_t i, size_t n) {
    size_t k = i + 1;
    if (k >= n || !isalpha((unsigned char)z[k])) return 0;
    while (k < n && (isalpha((unsigned char)z[k]) || z[k] == '_')) k++;
    if (k >= n || (z[k] != '/' && z[k] != '>')) return 0;
    while (k < n && z[k] != '>') {
        char c = z[k];
        if (!(isalnum((unsigned char)c) || c == '/' || c == '_' || c == '.' || c == '-' || c == '+')) return (size_t)-1;
        k++;
    }
    return k < n ? k + 1 - i : (size_t)-1;
}

/* Skips the quoted literal opening at z[i] (', " or `); returns the
** offset after its closing quote, or n when it is not closed. A backslash
** escapes the next byte in '...' and "..."; a doubled quote is a quote. */
static size_t skip_quoted(const char *z, size_t i, size_t n) {
    char q = z[i];
    size_t k = i + 1;
    while (k < n) {
        if (z[k] == '\\' && q != '`' && k + 1 < n) { k += 2; continue; }
        if (z[k] == q) {
            if (k + 1 < n && z[k + 1] == q) { k += 2; continue; }
            return k + 1;
        }
        k++;
    }
    return n;
}

static int is_word_at(const char *z, size_t i, size_t n, const char *zWord) {
    size_t m = strlen(zWord);
    if (i + m > n || strncasecmp(z + i, zWord, m) != 0) return 0;
    if (i > 0 && (isalnum((unsigned char)z[i - 1]) || z[i - 1] == '_')) return 0;
    return i + m == n || !(isalnum((unsigned char)z[i + m]) || z[i + m] == '_');
}

/* The table name at z[*pi] (`quoted` or [A-Za-z0-9_.]+) into zOut; moves
** *pi past it. 0 when there is none. */
static int read_table_name(const char *z, size_t *pi, size_t n, char *zOut, size_t nOut) {
    size_t i = *pi;
    while (i < n && isspace((unsigned char)z[i])) i++;
    size_t s = i, e;
    if (i < n && z[i] == '`') {
        e = skip_quoted(z, i, n);
    } else {
        e = i;
        while (e < n && (isalnum((unsigned char)z[e]) || z[e] == '_' || z[e] == '.')) e++;
    }
    if (e == s || e - s >= nOut) return 0;
    memcpy(zOut, z + s, e - s);
    zOut[e - s] = 0;
    *pi = e;
    return 1;
}

/* The next keyword at z[*pi] after blanks; moves past it when it is zWord. */
static int eat_word(const char *z, size_t *pi, size_t n, const char *zWord) {
    size_t i = *pi;
    while (i < n && isspace((unsigned char)z[i])) i++;
    if (!is_word_at(z, i, n, zWord)) return 0;
    *pi = i + strlen(zWord);
    return 1;
}

/* Parses --load; see "Template" at the top. */
static int tmpl_parse(const char *zSql, Template *t, LpError *err) {
    memset(t, 0, sizeof *t);
    size_t n = strlen(zSql), i = 0;
    if (!eat_word(zSql, &i, n, "insert") && !eat_word(zSql, &i, n, "replace")) {
        while (i < n && isspace((unsigned char)zSql[i])) i++;
        return tmpl_error(err, zSql, i, "expected INSERT or REPLACE");
    }
    eat_word(zSql, &i, n, "into");
    if (!read_table_name(zSql, &i, n, t->zTable, sizeof t->zTable)) {
        return tmpl_error(err, zSql, i, "expected a table name");
    }
    /* VALUES, outside quoted literals, and the '(' after it. */
    size_t iValues = n;
    for (size_t k = i; k < n;) {
        char c = zSql[k];
        if (c == '\'' || c == '"' || c == '`') { k = skip_quoted(zSql, k, n); continue; }
        if (c == '<') {
            size_t m = pattern_len(zSql, k, n);
            if (m && m != (size_t)-1) {
                return tmpl_error(err, zSql, k, "pattern '%.*s' outside the VALUES tuple (patterns go inside the "
                                  "one tuple after VALUES)", (int)m, zSql + k);
            }
        }
        if (is_word_at(zSql, k, n, "values") || is_word_at(zSql, k, n, "value")) { iValues = k; break; }
        k++;
    }
    if (iValues == n) return tmpl_error(err, zSql, n, "expected VALUES (...)");
    size_t iOpen = iValues + (is_word_at(zSql, iValues, n, "values") ? 6 : 5);
    while (iOpen < n && isspace((unsigned char)zSql[iOpen])) iOpen++;
    if (iOpen >= n || zSql[iOpen] != '(') return tmpl_error(err, zSql, iOpen, "expected '(' after VALUES");
    /* The matching ')'. */
    size_t iClose = n;
    int depth = 0;
    for (size_t k = iOpen; k < n;) {
        char c = zSql[k];
        if (c == '\'' || c == '"' || c == '`') {
            size_t e = skip_quoted(zSql, k, n);
            if (e == n && zSql[n - 1] != c) return tmpl_error(err, zSql, k, "unterminated quoted literal");
            k = e;
            continue;
        }
        if (c == '(') depth++;
        if (c == ')' && --depth == 0) { iClose = k; break; }
        k++;
    }
    if (iClose == n) return tmpl_error(err, zSql, iOpen, "the VALUES tuple has no closing ')'");
    for (size_t k = iClose + 1; k < n; k++) {
        if (!isspace((unsigned char)zSql[k]) && zSql[k] != ';') {
            return tmpl_error(err, zSql, k, "unexpected text after the VALUES tuple (give one tuple: "
                              "--batch-size makes the statements carry several)");
        }
    }
    t->zPrefix = strndup(zSql, iOpen);
    /* Segments: at most one literal between two patterns, so fewer than
    ** 2 * (patterns + 1) of them. */
    size_t nMax = 2;
    for (size_t k = iOpen; k <= iClose; k++) nMax += zSql[k] == '<' ? 2 : 0;
    t->aSeg = calloc(nMax, sizeof *t->aSeg);
    StrBuf lit = {0};
    if (!t->zPrefix || !t->aSeg) { tmpl_free(t); return lp_err_set(err, LP_NOMEM, "out of memory"); }
    char cQuote = 0;            /* the quote we are inside of, or 0 */
    size_t iLitStart = 0;
    for (size_t k = iOpen; k <= iClose;) {
        char c = zSql[k];
        if (cQuote) {
            if (c == '\\' && cQuote != '`' && k < iClose) {
                strbuf_append(&lit, zSql + k, 2);
                k += 2;
                continue;
            }
            if (c == cQuote) cQuote = 0;   /* a doubled quote closes and reopens: same result */
        } else if (c == '\'' || c == '"' || c == '`') {
            cQuote = c;
        }
        if (c == '<' && k < iClose && zSql[k + 1] == '<') {
            strbuf_appendc(&lit, '<');
            k += 2;
            continue;
        }
        size_t m = c == '<' ? pattern_len(zSql, k, iClose + 1) : 0;
        if (m == (size_t)-1) {
            strbuf_free(&lit);
            tmpl_free(t);
            return tmpl_error(err, zSql, k, "unterminated or malformed pattern (write << for a literal '<')");
        }
        if (m == 0) {
            strbuf_appendc(&lit, c);
            k++;
            continue;
        }
        if (lit.n > iLitStart) {
            t->aSeg[t->nSeg++] = (Seg){.kind = SEG_LITERAL, .iLit = iLitStart, .nLit = lit.n - iLitStart};
            iLitStart = lit.n;
        }
        Seg *s = &t->aSeg[t->nSeg];
        if (pattern_parse(zSql, k, k + m, s, err)) {
            strbuf_free(&lit);
            tmpl_free(t);
            return err ? err->code : LP_BADINPUT;
        }
        s->bQuote = cQuote == 0 || cQuote == '`';
        if (s->kind == PAT_TEXT) t->bText = 1;
        t->nSeg++;
        k += m;
    }
    if (lit.n > iLitStart) {
        t->aSeg[t->nSeg++] = (Seg){.kind = SEG_LITERAL, .iLit = iLitStart, .nLit = lit.n - iLitStart};
    }
    if (lit.oom) { strbuf_free(&lit); tmpl_free(t); return lp_err_set(err, LP_NOMEM, "out of memory"); }
    t->zLit = strbuf_detach(&lit, NULL);
    return LP_OK;
}

static void append_double(StrBuf *sb, double v) {
    char z[40];
    int n = snprintf(z, sizeof z, "%.6g", v);
    strbuf_append(sb, z, (size_t)n);
}

/* Appends row iRow's tuple to sb. */
static void tmpl_row(const Template *t, const Vocab *pVocab, uint64_t seed, uint64_t iRow, StrBuf *sb) {
    Rng r;
    rng_for_row(&r, seed, iRow);
    char z[32];
    for (int i = 0; i < t->nSeg; i++) {
        const Seg *s = &t->aSeg[i];
        switch (s->kind) {
        case SEG_LITERAL:
            strbuf_append(sb, t->zLit + s->iLit, s->nLit);
            break;
        case PAT_INCREMENT:
            strbuf_append(sb, z, (size_t)snprintf(z, sizeof z, "%" PRId64, (int64_t)((uint64_t)s->a + iRow)));
            break;
        case PAT_INT:
            strbuf_append(sb, z, (size_t)snprintf(z, sizeof z, "%" PRId64, rng_range(&r, s->a, s->b)));
            break;
        case PAT_FLOAT:
            append_double(sb, s->x + rng_unit(&r) * (s->y - s->x));
            break;
        case PAT_STRING: {
            int64_t len = rng_range(&r, s->a, s->b);
            if (s->bQuote) strbuf_appendc(sb, '\'');
            char *p = strbuf_reserve(sb, (size_t)len);
            if (p) {
                for (int64_t k = 0; k < len; k++) p[k] = (char)('a' + rng_below(&r, 26));
                strbuf_commit(sb, (size_t)len);
            }
            if (s->bQuote) strbuf_appendc(sb, '\'');
            break;
        }
        case PAT_TEXT: {
            int64_t nWord = rng_range(&r, s->a, s->b);
            if (s->bQuote) strbuf_appendc(sb, '\'');
            for (int64_t k = 0; k < nWord; k++) {
                uint32_t w = vocab_draw(pVocab, &r);
                if (k) strbuf_appendc(sb, ' ');
                strbuf_append(sb, pVocab->zBuf + pVocab->aOff[w], pVocab->aLen[w]);
            }
            if (s->bQuote) strbuf_appendc(sb, '\'');
            break;
        }
        case PAT_ARRAY_FLOAT:
            strbuf_appendc(sb, '(');
            for (int64_t k = 0; k < s->a; k++) {
                if (k) strbuf_appendc(sb, ',');
                append_double(sb, s->x + rng_unit(&r) * (s->y - s->x));
            }
            strbuf_appendc(sb, ')');
            break;
        }
    }
}

/* ------------------------------------------------------- init statements */

/* Splits z at ';' outside quoted literals; appends each non-blank
** statement (a copy) to *pazOut. LP_OK or LP_NOMEM. */
static int split_statements(const char *z, char ***pazOut, int *pnOut) {
    size_t n = strlen(z), iStart = 0;
    for (size_t k = 0; k <= n;) {
        if (k < n && (z[k] == '\'' || z[k] == '"' || z[k] == '`')) { k = skip_quoted(z, k, n); continue; }
        if (k == n || z[k] == ';') {
            size_t s = iStart, e = k;
            while (s < e && isspace((unsigned char)z[s])) s++;
            while (e > s && isspace((unsigned char)z[e - 1])) e--;
            if (e > s) {
                char **a = realloc(*pazOut, sizeof *a * (size_t)(*pnOut + 1));
                if (!a) return LP_NOMEM;
                *pazOut = a;
                if (!(a[*pnOut] = strndup(z + s, e - s))) return LP_NOMEM;
                (*pnOut)++;
            }
            iStart = k + 1;
        }
        k++;
    }
    return LP_OK;
}

/* ------------------------------------------------------------ server CPU */

/* utime + stime of pid in seconds (*pUser, *pSys); 0 when unreadable. */
static int proc_cpu(long pid, double *pUser, double *pSys) {
    char zPath[64], zBuf[1024];
    snprintf(zPath, sizeof zPath, "/proc/%ld/stat", pid);
    FILE *f = fopen(zPath, "r");
    if (!f) return 0;
    size_t n = fread(zBuf, 1, sizeof zBuf - 1, f);
    fclose(f);
    zBuf[n] = 0;
    char *p = strrchr(zBuf, ')');     /* the command name may hold spaces */
    if (!p) return 0;
    unsigned long long ut, st;
    /* After ')': state ppid pgrp session tty tpgid flags minflt cminflt
    ** majflt cmajflt utime stime (fields 3..15 of proc(5)). */
    if (sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2) return 0;
    double tick = (double)sysconf(_SC_CLK_TCK);
    *pUser = (double)ut / tick;
    *pSys = (double)st / tick;
    return 1;
}

/* Whether zHost names this machine. */
static int host_is_local(const char *zHost) {
    return strcmp(zHost, "localhost") == 0 || strncmp(zHost, "127.", 4) == 0 || strcmp(zHost, "::1") == 0 ||
           strcmp(zHost, "0.0.0.0") == 0;
}

/* The pid of the process holding a listening TCP socket on port, or -1. */
static long find_listener(unsigned port) {
    unsigned long aInode[16];
    int nInode = 0;
    const char *azFile[] = {"/proc/net/tcp", "/proc/net/tcp6"};
    for (int f = 0; f < 2; f++) {
        FILE *in = fopen(azFile[f], "r");
        if (!in) continue;
        char zLine[512];
        if (!fgets(zLine, sizeof zLine, in)) { fclose(in); continue; }   /* header */
        while (fgets(zLine, sizeof zLine, in) && nInode < 16) {
            /* sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode */
            char zLocal[64];
            unsigned st;
            unsigned long inode;
            if (sscanf(zLine, " %*s %63s %*s %x %*s %*s %*s %*s %*s %lu", zLocal, &st, &inode) != 3) continue;
            char *c = strrchr(zLocal, ':');
            if (!c || st != 0x0A || strtoul(c + 1, NULL, 16) != port || inode == 0) continue;
            aInode[nInode++] = inode;
        }
        fclose(in);
    }
    if (nInode == 0) return -1;
    long found = -1;
    DIR *proc = opendir("/proc");
    if (!proc) return -1;
    struct dirent *d;
    while (found < 0 && (d = readdir(proc))) {
        if (!isdigit((unsigned char)d->d_name[0])) continue;
        long pid = strtol(d->d_name, NULL, 10);
        if (pid == (long)getpid()) continue;
        char zDir[64];
        snprintf(zDir, sizeof zDir, "/proc/%ld/fd", pid);
        DIR *fd = opendir(zDir);
        if (!fd) continue;                  /* another user's process */
        struct dirent *e;
        while (found < 0 && (e = readdir(fd))) {
            char zPath[384], zLink[64];
            snprintf(zPath, sizeof zPath, "%s/%s", zDir, e->d_name);
            ssize_t m = readlink(zPath, zLink, sizeof zLink - 1);
            if (m <= 0) continue;
            zLink[m] = 0;
            unsigned long inode;
            if (sscanf(zLink, "socket:[%lu]", &inode) != 1) continue;
            for (int k = 0; k < nInode; k++) {
                if (aInode[k] == inode) found = pid;
            }
        }
        closedir(fd);
    }
    closedir(proc);
    return found;
}

/* ------------------------------------------------------------ the run */

typedef struct Config {
    const char *zHost;      /* server address */
    unsigned port;          /* MySQL protocol port */
    const char *zUser;      /* user name */
    const char *zPassword;  /* password or NULL */
    char **azInit;          /* --init statements, split at ';' */
    int nInit;
    const char *zLoad;      /* --load template or NULL */
    uint64_t nTotal;        /* rows to insert */
    uint64_t nBatch;        /* rows per statement */
    int nThread;            /* connections, one thread each */
    uint64_t seed;          /* generator seed */
    int bSeedGiven;         /* --seed was given */
    int bDrop;              /* --drop */
    int bQuiet;             /* --quiet */
    int bJson;              /* --json */
    int bIgnoreErrors;      /* --ignore-errors */
    long serverPid;         /* --server-pid, or 0 to look it up */
} Config;

typedef struct Worker {
    int iThread;            /* 0-based */
    MYSQL *db;              /* own connection */
    int bConnFailed;        /* connect failed: sent nothing */
    uint64_t *aLat;         /* latency of each successful statement, ns */
    size_t nLat, nLatCap;
    uint64_t nRows;         /* rows in successful statements */
    uint64_t nErr;          /* refused statements */
    int64_t tEnd;           /* lp_now_ns() when the thread was done */
} Worker;

static Config gCfg;
static Template gTmpl;
static Vocab gVocab;
static uint64_t gnStmt;                     /* statements in the run */
static atomic_uint_fast64_t gNextStmt;      /* next statement to send */
static atomic_uint_fast64_t gRowsDone;      /* rows in successful statements so far */
static atomic_int gStop;                    /* stop after the current statement */
static int gnFinished;                      /* threads done, under gDoneMutex */
static pthread_mutex_t gDoneMutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gDoneCond;            /* signalled as each thread is done */
static volatile sig_atomic_t gInterrupted;  /* SIGINT / SIGTERM seen */
static pthread_barrier_t gConnected, gGo;
static pthread_mutex_t gErrMutex = PTHREAD_MUTEX_INITIALIZER;
static struct {
    int bSet;               /* a first error is recorded */
    uint64_t iStmt;         /* its statement (0-based) */
    unsigned errnum;        /* mysql_errno, or 0 for a client error */
    char zMsg[512];         /* the message */
    char zSql[201];         /* the statement's first 200 bytes */
    int bFatal;             /* the connection is lost / out of memory */
} gFirstErr;

static void on_signal(int sig) {
    (void)sig;
    gInterrupted = 1;
    atomic_store(&gStop, 1);
}

static void record_error(uint64_t iStmt, unsigned errnum, const char *zMsg, const char *zSql, int bFatal) {
    pthread_mutex_lock(&gErrMutex);
    if (!gFirstErr.bSet || (bFatal && !gFirstErr.bFatal)) {
        gFirstErr.bSet = 1;
        gFirstErr.iStmt = iStmt;
        gFirstErr.errnum = errnum;
        gFirstErr.bFatal = bFatal;
        snprintf(gFirstErr.zMsg, sizeof gFirstErr.zMsg, "%s", zMsg);
        snprintf(gFirstErr.zSql, sizeof gFirstErr.zSql, "%s", zSql ? zSql : "");
    }
    pthread_mutex_unlock(&gErrMutex);
}

static MYSQL *db_connect(const Config *c, char *zErr, size_t nErr) {
    MYSQL *db = mysql_init(NULL);
    if (!db) {
        snprintf(zErr, nErr, "mysql_init: out of memory");
        return NULL;
    }
    unsigned timeout = 20;
    unsigned long maxPacket = 1024ul * 1024 * 1024;
    mysql_optionsv(db, MYSQL_OPT_CONNECT_TIMEOUT, &timeout);
    mysql_optionsv(db, MYSQL_OPT_MAX_ALLOWED_PACKET, &maxPacket);
    if (!mysql_real_connect(db, c->zHost, c->zUser, c->zPassword, NULL, c->port, NULL, 0)) {
        snprintf(zErr, nErr, "cannot connect to %s:%u: %s", c->zHost, c->port, mysql_error(db));
        mysql_close(db);
        return NULL;
    }
    return db;
}

/* Runs one statement and reads its result set, if any. 0 on success. */
static int db_exec(MYSQL *db, const char *zSql, size_t nSql) {
    if (mysql_real_query(db, zSql, (unsigned long)nSql) != 0) return 1;
    do {
        MYSQL_RES *res = mysql_store_result(db);
        if (res) mysql_free_result(res);
        else if (mysql_field_count(db) != 0) return 1;
    } while (mysql_next_result(db) == 0);
    return mysql_errno(db) != 0;
}

static void *worker_main(void *pArg) {
    Worker *w = pArg;
    const Config *c = &gCfg;
    char zErr[512];
    w->db = db_connect(c, zErr, sizeof zErr);
    if (!w->db) {
        record_error(0, 0, zErr, NULL, 1);
        w->bConnFailed = 1;
        atomic_store(&gStop, 1);
    }
    pthread_barrier_wait(&gConnected);
    pthread_barrier_wait(&gGo);
    StrBuf sb = {0};
    while (w->db && !atomic_load_explicit(&gStop, memory_order_relaxed)) {
        uint64_t iStmt = atomic_fetch_add(&gNextStmt, 1);
        if (iStmt >= gnStmt) break;
        uint64_t iFirst = iStmt * c->nBatch;
        uint64_t iEnd = iFirst + c->nBatch < c->nTotal ? iFirst + c->nBatch : c->nTotal;
        strbuf_reset(&sb);
        strbuf_appendz(&sb, gTmpl.zPrefix);
        for (uint64_t r = iFirst; r < iEnd; r++) {
            if (r > iFirst) strbuf_appendc(&sb, ',');
            tmpl_row(&gTmpl, &gVocab, c->seed, r, &sb);
        }
        if (sb.oom) {
            record_error(iStmt, 0, "out of memory building the statement", NULL, 1);
            atomic_store(&gStop, 1);
            break;
        }
        if (w->nLat == w->nLatCap) {
            size_t nNew = w->nLatCap ? w->nLatCap * 2 : 1024;
            uint64_t *a = realloc(w->aLat, nNew * sizeof *a);
            if (!a) {
                record_error(iStmt, 0, "out of memory keeping latency samples", NULL, 1);
                atomic_store(&gStop, 1);
                break;
            }
            w->aLat = a;
            w->nLatCap = nNew;
        }
        int64_t t0 = lp_now_ns();
        int bad = db_exec(w->db, sb.z, sb.n);
        int64_t t1 = lp_now_ns();
        if (!bad) {
            w->aLat[w->nLat++] = (uint64_t)(t1 - t0);
            w->nRows += iEnd - iFirst;
            atomic_fetch_add_explicit(&gRowsDone, iEnd - iFirst, memory_order_relaxed);
            continue;
        }
        unsigned e = mysql_errno(w->db);
        int bLost = e == 2006 || e == 2013 || e == 2055;   /* gone away / lost connection */
        w->nErr++;
        record_error(iStmt, e, mysql_error(w->db), sb.z, bLost);
        if (bLost || !c->bIgnoreErrors) {
            atomic_store(&gStop, 1);
            break;
        }
    }
    w->tEnd = lp_now_ns();
    strbuf_free(&sb);
    if (w->db) mysql_close(w->db);
    w->db = NULL;
    mysql_thread_end();
    pthread_mutex_lock(&gDoneMutex);
    gnFinished++;
    pthread_cond_signal(&gDoneCond);
    pthread_mutex_unlock(&gDoneMutex);
    return NULL;
}

static void progress_draw(uint64_t nDone, double secs, int bFinal) {
    const int W = 30;
    double frac = gCfg.nTotal ? (double)nDone / (double)gCfg.nTotal : 1.0;
    int nFill = (int)(frac * W);
    char zBar[64];
    for (int i = 0; i < W; i++) zBar[i] = i < nFill ? '#' : '.';
    zBar[W] = 0;
    double rate = secs > 0 ? (double)nDone / secs : 0;
    char zEta[32] = "";
    if (!bFinal && rate > 0 && nDone < gCfg.nTotal) {
        snprintf(zEta, sizeof zEta, "  eta %.0fs", (double)(gCfg.nTotal - nDone) / rate);
    }
    fprintf(stderr, "\r[%s] %5.1f%%  %" PRIu64 "/%" PRIu64 " rows  %.0f docs/s%s\033[K", zBar, frac * 100, nDone,
            gCfg.nTotal, rate, zEta);
    if (bFinal) fputc('\n', stderr);
    fflush(stderr);
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Nearest-rank percentile p (0 < p <= 100) of n sorted values, in ms. */
static double pct_ms(const uint64_t *a, size_t n, double p) {
    if (n == 0) return 0;
    size_t rank = (size_t)ceil(p / 100.0 * (double)n);
    if (rank < 1) rank = 1;
    if (rank > n) rank = n;
    return (double)a[rank - 1] / 1e6;
}

static void json_str(FILE *f, const char *z) {
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)z; *p; p++) {
        if (*p == '"' || *p == '\\') fprintf(f, "\\%c", *p);
        else if (*p == '\n') fputs("\\n", f);
        else if (*p < 0x20) fprintf(f, "\\u%04x", *p);
        else fputc(*p, f);
    }
    fputc('"', f);
}

/* ------------------------------------------------------------ arguments */

static void usage(FILE *f) {
    fprintf(f,
            "usage: loupe-load [--host=H] [--port=P] [--user=U] [--password=P]\n"
            "                  [--drop] [--init=\"SQL[; SQL...]\"]...\n"
            "                  [--load=\"INSERT INTO t (...) VALUES (<patterns>)\" --total=N\n"
            "                   [--threads=N] [--batch-size=N] [--seed=N] [--ignore-errors]\n"
            "                   [--server-pid=PID]] [--quiet] [--json]\n"
            "\n"
            "  --host=H            server address (127.0.0.1)\n"
            "  --port=P            MySQL protocol port (9306)\n"
            "  --user=U            user name (root); --password=P its password\n"
            "  --init=SQL          run once before the load; may be given several times\n"
            "                      and hold several statements separated by ';'\n"
            "  --drop              DROP TABLE IF EXISTS the --load table and every table a\n"
            "                      CREATE TABLE in --init makes, before --init runs\n"
            "  --load=SQL          INSERT or REPLACE with one VALUES tuple of patterns\n"
            "  --total=N           rows to insert (required with --load)\n"
            "  --batch-size=N      rows per statement (1)\n"
            "  --threads=N         connections, one thread each (1)\n"
            "  --seed=N            generator seed: the same seed gives the same rows,\n"
            "                      whatever --threads and --batch-size (default: clock)\n"
            "  --ignore-errors     count refused statements and go on\n"
            "  --server-pid=PID    the server process to measure CPU of (default: the\n"
            "                      process listening on --port, when --host is local)\n"
            "  --quiet             no progress bar\n"
            "  --json              print the results as one JSON object\n"
            "\n"
            "patterns (row r = 0 .. total-1):\n"
            "  <increment>                  r + 1; <increment/START>: START + r\n"
            "  <int/MIN/MAX>                uniform integer, MIN and MAX included\n"
            "  <float/MIN/MAX>              uniform real in [MIN, MAX)\n"
            "  <string/MINLEN/MAXLEN>       random letters a-z (quoted unless inside quotes)\n"
            "  <text/MINWORDS/MAXWORDS>     English-like words, Zipf-distributed (quoted\n"
            "                               unless inside quotes)\n"
            "  <array_float/DIM/MIN/MAX>    vector literal (f1,...,fDIM), uniform in [MIN, MAX)\n"
            "  <<                           a literal '<'\n"
            "\n"
            "example:\n"
            "  loupe-load --drop --init=\"CREATE TABLE t (title TEXT, price FLOAT)\" \\\n"
            "      --load=\"INSERT INTO t (id, title, price) VALUES (<increment>, <text/5/20>, <float/1/100>)\" \\\n"
            "      --total=100000 --batch-size=1000 --threads=4\n");
}

static int arg_u64(const char *zOpt, const char *z, uint64_t lo, uint64_t hi, uint64_t *p) {
    char *zEnd;
    errno = 0;
    if (!z || !isdigit((unsigned char)z[0])) goto bad;
    unsigned long long v = strtoull(z, &zEnd, 10);
    if (errno || *zEnd || v < lo || v > hi) goto bad;
    *p = v;
    return 1;
bad:
    fprintf(stderr, "loupe-load: --%s=%s: expected an integer from %" PRIu64 " to %" PRIu64 "\n", zOpt,
            z ? z : "", lo, hi);
    return 0;
}

/* 0 on success, else the exit status (2; 0 after --help). */
static int parse_args(int argc, char **argv, Config *c, int *pbHelp) {
    static const struct option aOpt[] = {
        {"host", required_argument, 0, 'h'},       {"port", required_argument, 0, 'P'},
        {"user", required_argument, 0, 'u'},       {"password", required_argument, 0, 'p'},
        {"init", required_argument, 0, 'i'},       {"load", required_argument, 0, 'l'},
        {"total", required_argument, 0, 'n'},      {"batch-size", required_argument, 0, 'b'},
        {"threads", required_argument, 0, 't'},    {"seed", required_argument, 0, 's'},
        {"drop", no_argument, 0, 'd'},             {"quiet", no_argument, 0, 'q'},
        {"json", no_argument, 0, 'j'},             {"ignore-errors", no_argument, 0, 'e'},
        {"server-pid", required_argument, 0, 'S'}, {"help", no_argument, 0, '?'},
        {0, 0, 0, 0},
    };
    *c = (Config){.zHost = "127.0.0.1", .port = 9306, .zUser = "root", .nBatch = 1, .nThread = 1};
    uint64_t v;
    int opt, bTotal = 0;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, ":", aOpt, NULL)) != -1) {
        switch (opt) {
        case 'h': c->zHost = optarg; break;
        case 'P':
            if (!arg_u64("port", optarg, 1, 65535, &v)) return 2;
            c->port = (unsigned)v;
            break;
        case 'u': c->zUser = optarg; break;
        case 'p': c->zPassword = optarg; break;
        case 'i':
            if (split_statements(optarg, &c->azInit, &c->nInit)) {
                fprintf(stderr, "loupe-load: out of memory\n");
                return 2;
            }
            break;
        case 'l': c->zLoad = optarg; break;
        case 'n':
            if (!arg_u64("total", optarg, 1, UINT64_MAX / 2, &c->nTotal)) return 2;
            bTotal = 1;
            break;
        case 'b':
            if (!arg_u64("batch-size", optarg, 1, 1000000, &c->nBatch)) return 2;
            break;
        case 't':
            if (!arg_u64("threads", optarg, 1, LL_MAX_THREADS, &v)) return 2;
            c->nThread = (int)v;
            break;
        case 's':
            if (!arg_u64("seed", optarg, 0, UINT64_MAX, &c->seed)) return 2;
            c->bSeedGiven = 1;
            break;
        case 'S':
            if (!arg_u64("server-pid", optarg, 1, 0x7fffffff, &v)) return 2;
            c->serverPid = (long)v;
            break;
        case 'd': c->bDrop = 1; break;
        case 'q': c->bQuiet = 1; break;
        case 'j': c->bJson = 1; break;
        case 'e': c->bIgnoreErrors = 1; break;
        case ':':
            fprintf(stderr, "loupe-load: %s needs a value\n", argv[optind - 1]);
            return 2;
        default:
            if (optopt == 0 && strcmp(argv[optind - 1], "--help") == 0) {
                usage(stdout);
                *pbHelp = 1;
                return 0;
            }
            fprintf(stderr, "loupe-load: unknown option '%s' (see --help)\n", argv[optind - 1]);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "loupe-load: unexpected argument '%s' (see --help)\n", argv[optind]);
        return 2;
    }
    if (c->zLoad && !bTotal) {
        fprintf(stderr, "loupe-load: --load needs --total=N (rows to insert)\n");
        return 2;
    }
    if (!c->zLoad && bTotal) {
        fprintf(stderr, "loupe-load: --total needs --load\n");
        return 2;
    }
    if (!c->zLoad && c->nInit == 0 && !c->bDrop) {
        fprintf(stderr, "loupe-load: nothing to do: give --load (and --total) and/or --init\n");
        usage(stderr);
        return 2;
    }
    return 0;
}

/* The tables to drop for --drop: the --load table and those that --init
** creates, each once. */
static int drop_tables(MYSQL *db) {
    char azName[64][256];
    int nName = 0;
    if (gCfg.zLoad) snprintf(azName[nName++], sizeof azName[0], "%s", gTmpl.zTable);
    for (int i = 0; i < gCfg.nInit && nName < 64; i++) {
        const char *z = gCfg.azInit[i];
        size_t n = strlen(z), k = 0;
        if (!eat_word(z, &k, n, "create") || !eat_word(z, &k, n, "table")) continue;
        if (eat_word(z, &k, n, "if")) {
            if (!eat_word(z, &k, n, "not") || !eat_word(z, &k, n, "exists")) continue;
        }
        if (!read_table_name(z, &k, n, azName[nName], sizeof azName[0])) continue;
        int bDup = 0;
        for (int j = 0; j < nName; j++) bDup |= strcasecmp(azName[j], azName[nName]) == 0;
        if (!bDup) nName++;
    }
    if (nName == 0) {
        fprintf(stderr, "loupe-load: --drop: no table to drop (neither --load nor a CREATE TABLE in --init "
                        "names one)\n");
        return 2;
    }
    for (int j = 0; j < nName; j++) {
        char zSql[300];
        int n = snprintf(zSql, sizeof zSql, "DROP TABLE IF EXISTS %s", azName[j]);
        if (db_exec(db, zSql, (size_t)n)) {
            fprintf(stderr, "loupe-load: --drop: %s: ERROR %u: %s\n", zSql, mysql_errno(db), mysql_error(db));
            return 1;
        }
        if (!gCfg.bQuiet && !gCfg.bJson) fprintf(stderr, "loupe-load: %s\n", zSql);
    }
    return 0;
}

/* Prints the first error to stderr: which statement, which rows, what the
** server said, and the start of the statement. */
static void print_first_error(void) {
    if (!gFirstErr.bSet) return;
    if (!gFirstErr.zSql[0]) {
        fprintf(stderr, "loupe-load: %s\n", gFirstErr.zMsg);
        return;
    }
    uint64_t iFirst = gFirstErr.iStmt * gCfg.nBatch;
    uint64_t iLast = iFirst + gCfg.nBatch < gCfg.nTotal ? iFirst + gCfg.nBatch : gCfg.nTotal;
    fprintf(stderr, "loupe-load: statement %" PRIu64 " of %" PRIu64 " (rows %" PRIu64 "-%" PRIu64 ") failed: ",
            gFirstErr.iStmt + 1, gnStmt, iFirst + 1, iLast);
    if (gFirstErr.errnum) fprintf(stderr, "ERROR %u: ", gFirstErr.errnum);
    fprintf(stderr, "%s\n  statement: %s%s\n", gFirstErr.zMsg, gFirstErr.zSql,
            strlen(gFirstErr.zSql) >= sizeof gFirstErr.zSql - 1 ? "..." : "");
}

int main(int argc, char **argv) {
    int bHelp = 0;
    int rc = parse_args(argc, argv, &gCfg, &bHelp);
    if (rc || bHelp) return rc;
    LpError err;
    lp_err_clear(&err);
    if (gCfg.zLoad) {
        if (tmpl_parse(gCfg.zLoad, &gTmpl, &err)) {
            fprintf(stderr, "loupe-load: %s\n", err.zMsg);
            return 2;
        }
        if (gTmpl.bText && vocab_build(&gVocab, &err)) {
            fprintf(stderr, "loupe-load: %s\n", err.zMsg);
            return 1;
        }
    }
    if (!gCfg.bSeedGiven) {
        /* 32 bits, so that the reported seed survives any JSON reader. */
        gCfg.seed = ll_mix((uint64_t)lp_now_ns() ^ ((uint64_t)getpid() << 20) ^ (uint64_t)lp_unix_now_ms()) >> 32;
    }
    if (mysql_library_init(0, NULL, NULL) != 0) {
        fprintf(stderr, "loupe-load: mysql_library_init failed\n");
        return 1;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    /* --drop and --init, on a connection of their own. */
    if (gCfg.bDrop || gCfg.nInit) {
        char zErr[512];
        MYSQL *db = db_connect(&gCfg, zErr, sizeof zErr);
        if (!db) {
            fprintf(stderr, "loupe-load: %s\n", zErr);
            return 1;
        }
        if (gCfg.bDrop && (rc = drop_tables(db)) != 0) {
            mysql_close(db);
            return rc;
        }
        for (int i = 0; i < gCfg.nInit; i++) {
            const char *z = gCfg.azInit[i];
            if (db_exec(db, z, strlen(z))) {
                fprintf(stderr, "loupe-load: --init statement %d failed: ERROR %u: %s\n  statement: %.200s%s\n", i + 1,
                        mysql_errno(db), mysql_error(db), z, strlen(z) > 200 ? "..." : "");
                mysql_close(db);
                return 1;
            }
        }
        mysql_close(db);
        if (!gCfg.bQuiet && !gCfg.bJson && gCfg.nInit) {
            fprintf(stderr, "loupe-load: %d --init statement%s done\n", gCfg.nInit, gCfg.nInit == 1 ? "" : "s");
        }
    }
    if (!gCfg.zLoad) return 0;

    /* The load. */
    long pid = gCfg.serverPid ? gCfg.serverPid : host_is_local(gCfg.zHost) ? find_listener(gCfg.port) : -1;
    gnStmt = gCfg.nTotal / gCfg.nBatch + (gCfg.nTotal % gCfg.nBatch != 0);
    int nThread = gCfg.nThread;
    if ((uint64_t)nThread > gnStmt) nThread = (int)gnStmt;     /* no idle connections */
    Worker *aW = calloc((size_t)nThread, sizeof *aW);
    pthread_t *aTid = calloc((size_t)nThread, sizeof *aTid);
    if (!aW || !aTid) {
        fprintf(stderr, "loupe-load: out of memory\n");
        return 1;
    }
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&gDoneCond, &ca);
    pthread_barrier_init(&gConnected, NULL, (unsigned)nThread + 1);
    pthread_barrier_init(&gGo, NULL, (unsigned)nThread + 1);
    for (int i = 0; i < nThread; i++) {
        aW[i].iThread = i;
        int e = pthread_create(&aTid[i], NULL, worker_main, &aW[i]);
        if (e != 0) {
            /* The barriers count on every thread: without it they would hang. */
            fprintf(stderr, "loupe-load: pthread_create: %s\n", strerror(e));
            _exit(1);
        }
    }
    pthread_barrier_wait(&gConnected);
    double user0 = 0, sys0 = 0;
    int bCpu = pid > 0 && proc_cpu(pid, &user0, &sys0);
    struct rusage ru0, ru1;
    getrusage(RUSAGE_SELF, &ru0);
    int64_t t0 = lp_now_ns();
    pthread_barrier_wait(&gGo);
    int bBar = !gCfg.bQuiet && isatty(2);
    /* The progress bar, redrawn every 200 ms until the threads are done. */
    pthread_mutex_lock(&gDoneMutex);
    while (gnFinished < nThread) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        ts.tv_nsec += 200 * 1000 * 1000;
        if (ts.tv_nsec >= 1000000000) { ts.tv_sec++; ts.tv_nsec -= 1000000000; }
        if (pthread_cond_timedwait(&gDoneCond, &gDoneMutex, &ts) == ETIMEDOUT && bBar && !atomic_load(&gStop)) {
            progress_draw(atomic_load(&gRowsDone), (double)(lp_now_ns() - t0) / 1e9, 0);
        }
    }
    pthread_mutex_unlock(&gDoneMutex);
    for (int i = 0; i < nThread; i++) pthread_join(aTid[i], NULL);
    /* The run ends when the last thread is done (not when main noticed). */
    int64_t t1 = t0;
    for (int i = 0; i < nThread; i++) t1 = aW[i].tEnd > t1 ? aW[i].tEnd : t1;
    getrusage(RUSAGE_SELF, &ru1);
    double user1 = 0, sys1 = 0;
    bCpu = bCpu && proc_cpu(pid, &user1, &sys1);
    double secs = (double)(t1 - t0) / 1e9;

    int bConnFailed = 0;
    uint64_t nRows = 0, nErr = 0;
    size_t nLat = 0;
    for (int i = 0; i < nThread; i++) {
        bConnFailed |= aW[i].bConnFailed;
        nRows += aW[i].nRows;
        nErr += aW[i].nErr;
        nLat += aW[i].nLat;
    }
    if (bConnFailed) {
        if (bBar) fputc('\n', stderr);
        print_first_error();
        return 1;
    }
    if (bBar) progress_draw(nRows, secs, 1);

    /* Exact percentiles over every sample. */
    uint64_t *aLat = malloc((nLat ? nLat : 1) * sizeof *aLat);
    if (!aLat) {
        fprintf(stderr, "loupe-load: out of memory sorting %zu latency samples\n", nLat);
        return 1;
    }
    size_t k = 0;
    long double sum = 0;
    for (int i = 0; i < nThread; i++) {
        for (size_t j = 0; j < aW[i].nLat; j++) {
            aLat[k++] = aW[i].aLat[j];
            sum += aW[i].aLat[j];
        }
        free(aW[i].aLat);
    }
    qsort(aLat, nLat, sizeof *aLat, cmp_u64);
    double avg = nLat ? (double)(sum / nLat) / 1e6 : 0;
    double p50 = pct_ms(aLat, nLat, 50), p95 = pct_ms(aLat, nLat, 95), p99 = pct_ms(aLat, nLat, 99);
    double mx = nLat ? (double)aLat[nLat - 1] / 1e6 : 0;
    double docsPerS = secs > 0 ? (double)nRows / secs : 0;
    double stmtPerS = secs > 0 ? (double)nLat / secs : 0;
    double clientCpu = (double)(ru1.ru_utime.tv_sec - ru0.ru_utime.tv_sec + ru1.ru_stime.tv_sec - ru0.ru_stime.tv_sec) +
                       (double)(ru1.ru_utime.tv_usec - ru0.ru_utime.tv_usec + ru1.ru_stime.tv_usec -
                                ru0.ru_stime.tv_usec) / 1e6;
    double cpuUser = user1 - user0, cpuSys = sys1 - sys0;

    if (gCfg.bJson) {
        printf("{\"rows\":%" PRIu64 ",\"statements\":%zu,\"errors\":%" PRIu64 ",\"total\":%" PRIu64
               ",\"batch_size\":%" PRIu64 ",\"threads\":%d,\"seed\":%" PRIu64 ",\"time_s\":%.6f,\"docs_per_s\":%.1f"
               ",\"statements_per_s\":%.1f,\"latency_ms\":{\"avg\":%.4f,\"p50\":%.4f,\"p95\":%.4f,\"p99\":%.4f"
               ",\"max\":%.4f},",
               nRows, nLat, nErr, gCfg.nTotal, gCfg.nBatch, nThread, gCfg.seed, secs, docsPerS, stmtPerS, avg, p50,
               p95, p99, mx);
        if (bCpu) {
            printf("\"server_cpu\":{\"pid\":%ld,\"user_s\":%.2f,\"sys_s\":%.2f,\"cpu_s\":%.2f,\"avg_cores\":%.3f},", pid,
                   cpuUser, cpuSys, cpuUser + cpuSys, secs > 0 ? (cpuUser + cpuSys) / secs : 0);
        } else {
            printf("\"server_cpu\":null,");
        }
        printf("\"client_cpu_s\":%.3f,\"interrupted\":%s,\"first_error\":", clientCpu,
               gInterrupted ? "true" : "false");
        if (gFirstErr.bSet) {
            printf("{\"statement\":%" PRIu64 ",\"errno\":%u,\"message\":", gFirstErr.iStmt + 1, gFirstErr.errnum);
            json_str(stdout, gFirstErr.zMsg);
            printf("}");
        } else {
            printf("null");
        }
        printf("}\n");
    } else {
        printf("loupe-load: %" PRIu64 " rows in %zu statements (batch %" PRIu64 ", %d thread%s, seed %" PRIu64 ")%s\n",
               nRows, nLat, gCfg.nBatch, nThread, nThread == 1 ? "" : "s", gCfg.seed,
               gInterrupted ? ", interrupted" : "");
        printf("  time          %.3f s\n", secs);
        printf("  docs/s        %.1f\n", docsPerS);
        printf("  statements/s  %.1f\n", stmtPerS);
        printf("  latency ms    avg %.3f  p50 %.3f  p95 %.3f  p99 %.3f  max %.3f\n", avg, p50, p95, p99, mx);
        if (bCpu) {
            printf("  server cpu    %.2f s (user %.2f, sys %.2f), %.2f cores on average (pid %ld)\n", cpuUser + cpuSys,
                   cpuUser, cpuSys, secs > 0 ? (cpuUser + cpuSys) / secs : 0, pid);
        } else {
            printf("  server cpu    n/a\n");
        }
        printf("  client cpu    %.2f s\n", clientCpu);
        printf("  errors        %" PRIu64 "\n", nErr);
    }
    fflush(stdout);
    print_first_error();
    free(aLat);
    free(aW);
    free(aTid);
    tmpl_free(&gTmpl);
    vocab_free(&gVocab);
    for (int i = 0; i < gCfg.nInit; i++) free(gCfg.azInit[i]);
    free(gCfg.azInit);
    mysql_library_end();
    if (gInterrupted) {
        fprintf(stderr, "loupe-load: interrupted\n");
        return 1;
    }
    return (gFirstErr.bSet && (gFirstErr.bFatal || !gCfg.bIgnoreErrors)) ? 1 : 0;
}
