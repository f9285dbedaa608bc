/*
** test_mysql_proto.c — unit tests for the MySQL protocol codec
** (src/server/mysql/packet.c) and the server configuration parser
** (src/server/config.c): field encodings at their boundaries, truncated
** and malformed input rejected, packet framing and splitting at 0xFFFFFF,
** the packets the server builds byte for byte, handshake responses in
** each of their encodings, and mysql_native_password against a known
** vector (computed independently with pymysql's scramble_native_password).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "server/config.h"
#include "server/mysql/packet.h"
#include "util/log.h"

/* ------------------------------------------------------------- helpers */

/* The payload of the single packet at the start of sb (header checked). */
static const uint8_t *one_packet(const StrBuf *sb, uint8_t seq, size_t *pn) {
    const uint8_t *a = (const uint8_t *)sb->z;
    assert_true(sb->n >= 4);
    size_t n = (size_t)a[0] | (size_t)a[1] << 8 | (size_t)a[2] << 16;
    assert_int_equal(a[3], seq);
    assert_int_equal(sb->n, n + 4);
    *pn = n;
    return a + 4;
}

/* Appends a HandshakeResponse41 with the given pieces (auth response in
** the encoding caps selects). */
static void build_response(StrBuf *sb, uint32_t caps, const char *zUser, const uint8_t *aAuth,
                           size_t nAuth, const char *zDb, const char *zPlugin,
                           const uint8_t *aAttr, size_t nAttr) {
    static const uint8_t aFill[23] = {0};
    mysql_put_u32(sb, caps);
    mysql_put_u32(sb, 1u << 24);
    mysql_put_u8(sb, 45);
    strbuf_append(sb, aFill, sizeof(aFill));
    strbuf_append(sb, zUser, strlen(zUser) + 1);
    if (caps & MYSQL_CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA) {
        mysql_put_lenenc_str(sb, aAuth, nAuth);
    } else if (caps & MYSQL_CLIENT_SECURE_CONNECTION) {
        mysql_put_u8(sb, (uint8_t)nAuth);
        strbuf_append(sb, aAuth, nAuth);
    } else {
        strbuf_append(sb, aAuth, nAuth);
        mysql_put_u8(sb, 0);
    }
    if (zDb) strbuf_append(sb, zDb, strlen(zDb) + 1);
    if (zPlugin) strbuf_append(sb, zPlugin, strlen(zPlugin) + 1);
    if (aAttr) mysql_put_lenenc_str(sb, aAttr, nAttr);
    assert_false(sb->oom);
}

#define CAPS_MODERN                                                                    \
    (MYSQL_CLIENT_PROTOCOL_41 | MYSQL_CLIENT_SECURE_CONNECTION | MYSQL_CLIENT_PLUGIN_AUTH | \
     MYSQL_CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA | MYSQL_CLIENT_CONNECT_WITH_DB |           \
     MYSQL_CLIENT_CONNECT_ATTRS)

static const uint8_t aScr[20] = "abcdefghijklmnopqrst";
/* pymysql: scramble_native_password(b"secret", b"abcdefghijklmnopqrst") */
static const uint8_t aTokSecret[20] = {0x88, 0x17, 0xc5, 0x0f, 0xa7, 0x79, 0xda, 0xef, 0x01, 0x0e,
                                       0xe7, 0x57, 0x78, 0x25, 0xb0, 0x84, 0x7d, 0xf9, 0x84, 0x2e};
/* SHA1(SHA1("secret")), MySQL's PASSWORD('secret') without the '*' */
static const uint8_t aHashSecret[20] = {0x14, 0xe6, 0x55, 0x67, 0xab, 0xdb, 0x51, 0x35, 0xd0, 0xcf,
                                        0xd9, 0xa7, 0x0b, 0x30, 0x32, 0xc1, 0x79, 0xa4, 0x9e, 0xe7};

/* ------------------------------------------------------ lenenc integers */

static void test_lenenc_boundaries(void **state) {
    (void)state;
    static const struct {
        uint64_t v;
        size_t nWire;
        uint8_t prefix;
    } aCase[] = {
        {0, 1, 0x00},          {250, 1, 0xFA},          {251, 3, 0xFC},
        {0xFFFF, 3, 0xFC},     {0x10000, 4, 0xFD},      {0xFFFFFF, 4, 0xFD},
        {1u << 24, 9, 0xFE},   {UINT64_MAX, 9, 0xFE},
    };
    for (size_t i = 0; i < LP_ARRAY_SIZE(aCase); i++) {
        StrBuf sb = {0};
        mysql_put_lenenc(&sb, aCase[i].v);
        assert_int_equal(sb.n, aCase[i].nWire);
        assert_int_equal((uint8_t)sb.z[0], aCase[i].prefix);
        MysqlReader r;
        uint64_t v = 0;
        mysql_reader_init(&r, sb.z, sb.n);
        assert_int_equal(mysql_read_lenenc(&r, &v, NULL), LP_OK);
        assert_true(v == aCase[i].v);
        assert_int_equal(r.i, sb.n);
        /* Every truncation of it is refused, without moving the cursor. */
        for (size_t n = 0; n < sb.n; n++) {
            LpError err;
            mysql_reader_init(&r, sb.z, n);
            assert_int_equal(mysql_read_lenenc(&r, &v, &err), LP_CORRUPT);
            assert_int_equal(r.i, 0);
            assert_non_null(strstr(err.zMsg, "truncated"));
        }
        strbuf_free(&sb);
    }
}

static void test_lenenc_invalid_prefix(void **state) {
    (void)state;
    static const uint8_t aNull[] = {0xFB}, aBad[] = {0xFF, 1, 2, 3, 4, 5, 6, 7, 8};
    MysqlReader r;
    uint64_t v;
    LpError err;
    mysql_reader_init(&r, aNull, sizeof(aNull));
    assert_int_equal(mysql_read_lenenc(&r, &v, &err), LP_CORRUPT);
    mysql_reader_init(&r, aBad, sizeof(aBad));
    assert_int_equal(mysql_read_lenenc(&r, &v, &err), LP_CORRUPT);
    assert_non_null(strstr(err.zMsg, "0xFF"));
}

static void test_lenenc_str(void **state) {
    (void)state;
    static const size_t aLen[] = {0, 1, 250, 251, 0xFFFF, 0x10000};
    for (size_t i = 0; i < LP_ARRAY_SIZE(aLen); i++) {
        StrBuf sb = {0};
        char *z = malloc(aLen[i] + 1);
        assert_non_null(z);
        memset(z, 'x', aLen[i]);
        mysql_put_lenenc_str(&sb, z, aLen[i]);
        MysqlReader r;
        const uint8_t *p;
        size_t n;
        mysql_reader_init(&r, sb.z, sb.n);
        assert_int_equal(mysql_read_lenenc_str(&r, &p, &n, NULL), LP_OK);
        assert_int_equal(n, aLen[i]);
        assert_memory_equal(p, z, n);
        assert_int_equal(r.i, sb.n);
        /* One byte short: the declared length overruns the buffer. */
        mysql_reader_init(&r, sb.z, sb.n - 1);
        assert_int_equal(mysql_read_lenenc_str(&r, &p, &n, NULL), LP_CORRUPT);
        assert_int_equal(r.i, 0);
        free(z);
        strbuf_free(&sb);
    }
}

static void test_fixed_and_nulstr(void **state) {
    (void)state;
    static const uint8_t a[] = {0x34, 0x12, 0x78, 0x56, 0x34, 0x12, 'h', 'i', 0, 'x'};
    MysqlReader r;
    uint16_t v16;
    uint32_t v32;
    const char *z;
    size_t n;
    mysql_reader_init(&r, a, sizeof(a));
    assert_int_equal(mysql_read_u16(&r, &v16, NULL), LP_OK);
    assert_int_equal(v16, 0x1234);
    assert_int_equal(mysql_read_u32(&r, &v32, NULL), LP_OK);
    assert_int_equal(v32, 0x12345678);
    assert_int_equal(mysql_read_nulstr(&r, &z, &n, NULL), LP_OK);
    assert_string_equal(z, "hi");
    assert_int_equal(n, 2);
    /* "x" has no terminator. */
    assert_int_equal(mysql_read_nulstr(&r, &z, &n, NULL), LP_CORRUPT);
    assert_int_equal(mysql_read_u16(&r, &v16, NULL), LP_CORRUPT);
    assert_int_equal(mysql_read_u32(&r, &v32, NULL), LP_CORRUPT);
    mysql_reader_init(&r, a, 0);
    assert_int_equal(mysql_read_nulstr(&r, &z, &n, NULL), LP_CORRUPT);
}

/* ------------------------------------------------------------- framing */

static void test_frame_small(void **state) {
    (void)state;
    static const uint8_t a[] = {3, 0, 0, 0, 0x03, 'x', 'y', 9, 9};
    MysqlFrame f;
    int bDone;
    LpError err;
    /* Header incomplete, payload incomplete, complete. */
    for (size_t n = 0; n < 7; n++) {
        assert_int_equal(mysql_frame_scan(a, n, 0, 1024, &f, &bDone, &err), LP_OK);
        assert_false(bDone);
    }
    assert_int_equal(mysql_frame_scan(a, sizeof(a), 0, 1024, &f, &bDone, &err), LP_OK);
    assert_true(bDone);
    assert_int_equal(f.nWire, 7);
    assert_int_equal(f.nPayload, 3);
    assert_int_equal(f.nPart, 1);
    assert_int_equal(f.seqNext, 1);
    /* The wrong sequence id. */
    assert_int_equal(mysql_frame_scan(a, sizeof(a), 1, 1024, &f, &bDone, &err), LP_CORRUPT);
    assert_non_null(strstr(err.zMsg, "sequence id 0, expected 1"));
    /* An empty packet is a packet. */
    static const uint8_t aEmpty[] = {0, 0, 0, 5};
    assert_int_equal(mysql_frame_scan(aEmpty, 4, 5, 1024, &f, &bDone, &err), LP_OK);
    assert_true(bDone);
    assert_int_equal(f.nPayload, 0);
    assert_int_equal(f.seqNext, 6);
}

static void test_frame_too_big_from_header(void **state) {
    (void)state;
    /* Only the header of a 2000-byte packet: refused before any payload. */
    static const uint8_t a[] = {0xD0, 0x07, 0, 0};
    MysqlFrame f;
    int bDone;
    LpError err;
    assert_int_equal(mysql_frame_scan(a, sizeof(a), 0, 1999, &f, &bDone, &err), LP_LIMIT);
    assert_int_equal(f.nPayload, 2000);
    assert_string_equal(err.zMsg, "packet of 2000 bytes exceeds max_allowed_packet (1999)");
    assert_int_equal(mysql_frame_scan(a, sizeof(a), 0, 2000, &f, &bDone, &err), LP_OK);
    assert_false(bDone);
}

/* Builds a packet of nPayload patterned bytes, splits it, scans and joins
** it back. */
static void check_split(size_t nPayload, size_t nPartExpect) {
    StrBuf sb = {0};
    uint8_t seq = 7;
    size_t off = mysql_packet_begin(&sb);
    char *p = strbuf_reserve(&sb, nPayload);
    assert_non_null(p);
    for (size_t i = 0; i < nPayload; i++) p[i] = (char)(i * 31 + i / 251);
    strbuf_commit(&sb, nPayload);
    mysql_packet_end(&sb, off, &seq);
    assert_false(sb.oom);
    assert_int_equal(seq, 7 + nPartExpect);
    assert_int_equal(sb.n, nPayload + 4 * nPartExpect);
    uint8_t *a = (uint8_t *)sb.z;
    /* Headers: full parts, then the short (maybe empty) last one. */
    size_t o = 0;
    for (size_t j = 0; j < nPartExpect; j++) {
        size_t len = (size_t)a[o] | (size_t)a[o + 1] << 8 | (size_t)a[o + 2] << 16;
        assert_int_equal(a[o + 3], (uint8_t)(7 + j));
        assert_int_equal(len, j + 1 < nPartExpect ? MYSQL_MAX_PART : nPayload - j * MYSQL_MAX_PART);
        o += 4 + len;
    }
    MysqlFrame f;
    int bDone;
    assert_int_equal(mysql_frame_scan(a, sb.n - 1, 7, SIZE_MAX, &f, &bDone, NULL), LP_OK);
    assert_false(bDone);
    assert_int_equal(mysql_frame_scan(a, sb.n, 7, SIZE_MAX, &f, &bDone, NULL), LP_OK);
    assert_true(bDone);
    assert_int_equal(f.nPart, nPartExpect);
    assert_int_equal(f.nPayload, nPayload);
    assert_int_equal(f.nWire, sb.n);
    assert_int_equal(f.seqNext, (uint8_t)(7 + nPartExpect));
    /* A maximum just under the total is caught at the last header. */
    if (nPayload > 0) {
        MysqlFrame f2;
        assert_int_equal(mysql_frame_scan(a, sb.n, 7, nPayload - 1, &f2, &bDone, NULL), LP_LIMIT);
        assert_int_equal(f2.nPayload, nPayload);
    }
    const uint8_t *q = mysql_frame_join(a, &f);
    for (size_t i = 0; i < nPayload; i++) {
        if (q[i] != (uint8_t)(i * 31 + i / 251)) fail_msg("byte %zu differs after join", i);
    }
    strbuf_free(&sb);
}

static void test_frame_split(void **state) {
    (void)state;
    check_split(0, 1);
    check_split(MYSQL_MAX_PART - 1, 1);
    check_split(MYSQL_MAX_PART, 2);         /* then an empty part */
    check_split(MYSQL_MAX_PART + 10, 2);
    check_split(2 * MYSQL_MAX_PART, 3);
}

static void test_frame_multipart_seq(void **state) {
    (void)state;
    /* A full part followed by a part with a skipped sequence id. */
    size_t n = 4 + MYSQL_MAX_PART + 4;
    uint8_t *a = calloc(1, n);
    assert_non_null(a);
    a[0] = a[1] = a[2] = 0xFF;
    a[3] = 0;
    a[4 + MYSQL_MAX_PART + 3] = 2;
    MysqlFrame f;
    int bDone;
    LpError err;
    assert_int_equal(mysql_frame_scan(a, n, 0, SIZE_MAX, &f, &bDone, &err), LP_CORRUPT);
    assert_non_null(strstr(err.zMsg, "part 2"));
    free(a);
}

/* ------------------------------------------------------------- builders */

static void test_ok_err_eof_bytes(void **state) {
    (void)state;
    StrBuf sb = {0};
    uint8_t seq = 1;
    mysql_put_ok(&sb, &seq, 1, 0, 2, 0, NULL);
    static const uint8_t aOk[] = {7, 0, 0, 1, 0x00, 1, 0, 2, 0, 0, 0};
    assert_int_equal(sb.n, sizeof(aOk));
    assert_memory_equal(sb.z, aOk, sizeof(aOk));
    assert_int_equal(seq, 2);

    strbuf_reset(&sb);
    mysql_put_ok(&sb, &seq, 300, 1ull << 32, 3, 1, "Rows matched: 1");
    size_t n;
    const uint8_t *p = one_packet(&sb, 2, &n);
    MysqlReader r;
    uint64_t v;
    uint16_t v16;
    mysql_reader_init(&r, p, n);
    assert_int_equal(p[0], 0);
    r.i = 1;
    assert_int_equal(mysql_read_lenenc(&r, &v, NULL), LP_OK);
    assert_true(v == 300);
    assert_int_equal(mysql_read_lenenc(&r, &v, NULL), LP_OK);
    assert_true(v == 1ull << 32);
    mysql_read_u16(&r, &v16, NULL);
    assert_int_equal(v16, 3);
    mysql_read_u16(&r, &v16, NULL);
    assert_int_equal(v16, 1);
    assert_int_equal(n - r.i, 15);
    assert_memory_equal(p + r.i, "Rows matched: 1", 15);

    strbuf_reset(&sb);
    seq = 1;
    mysql_put_err(&sb, &seq, 1064, "42000", "bad");
    static const uint8_t aErr[] = {12, 0, 0, 1, 0xFF, 0x28, 0x04, '#', '4', '2', '0', '0', '0',
                                   'b', 'a', 'd'};
    assert_int_equal(sb.n, sizeof(aErr));
    assert_memory_equal(sb.z, aErr, sizeof(aErr));

    strbuf_reset(&sb);
    seq = 1;
    mysql_put_err(&sb, &seq, 1105, NULL, "x");
    assert_memory_equal(sb.z + 7, "#HY000x", 7);

    strbuf_reset(&sb);
    seq = 4;
    mysql_put_eof(&sb, &seq, 0, 2);
    static const uint8_t aEof[] = {5, 0, 0, 4, 0xFE, 0, 0, 2, 0};
    assert_int_equal(sb.n, sizeof(aEof));
    assert_memory_equal(sb.z, aEof, sizeof(aEof));
    strbuf_free(&sb);
}

static void test_handshake_layout(void **state) {
    (void)state;
    StrBuf sb = {0};
    uint8_t seq = 0;
    MysqlHandshake h = {.zVersion = "8.0.0-loupe", .connId = 0x01020304, .aScramble = aScr,
                        .caps = MYSQL_SERVER_CAPS, .charset = MYSQL_CHARSET_UTF8MB4,
                        .status = 2, .zPlugin = MYSQL_NATIVE_PLUGIN};
    mysql_put_handshake(&sb, &seq, &h);
    size_t n;
    const uint8_t *p = one_packet(&sb, 0, &n);
    MysqlReader r;
    uint8_t v8;
    uint16_t lo, hi, status;
    uint32_t id;
    const char *z;
    size_t nz;
    const uint8_t *pb;
    mysql_reader_init(&r, p, n);
    mysql_read_u8(&r, &v8, NULL);
    assert_int_equal(v8, 10);
    assert_int_equal(mysql_read_nulstr(&r, &z, &nz, NULL), LP_OK);
    assert_string_equal(z, "8.0.0-loupe");
    mysql_read_u32(&r, &id, NULL);
    assert_int_equal(id, 0x01020304);
    mysql_read_bytes(&r, 8, &pb, NULL);
    assert_memory_equal(pb, aScr, 8);
    mysql_read_u8(&r, &v8, NULL);
    assert_int_equal(v8, 0);
    mysql_read_u16(&r, &lo, NULL);
    mysql_read_u8(&r, &v8, NULL);
    assert_int_equal(v8, 45);
    mysql_read_u16(&r, &status, NULL);
    assert_int_equal(status, 2);
    mysql_read_u16(&r, &hi, NULL);
    uint32_t caps = (uint32_t)lo | (uint32_t)hi << 16;
    assert_int_equal(caps, MYSQL_SERVER_CAPS);
    assert_false(caps & (MYSQL_CLIENT_SSL | MYSQL_CLIENT_COMPRESS | MYSQL_CLIENT_MULTI_STATEMENTS));
    mysql_read_u8(&r, &v8, NULL);
    assert_int_equal(v8, 21);
    mysql_read_bytes(&r, 10, &pb, NULL);
    mysql_read_bytes(&r, 13, &pb, NULL);
    assert_memory_equal(pb, aScr + 8, 12);
    assert_int_equal(pb[12], 0);
    assert_int_equal(mysql_read_nulstr(&r, &z, &nz, NULL), LP_OK);
    assert_string_equal(z, "mysql_native_password");
    assert_int_equal(r.i, n);
    strbuf_free(&sb);
}

/* Reads back a column definition. */
static void check_coldef(const SqlColumn *c, uint8_t type, uint16_t charset, uint8_t decimals,
                         uint16_t flags) {
    MysqlColumnDef d;
    StrBuf sb = {0};
    uint8_t seq = 2;
    mysql_column_from_sql(c, &d);
    mysql_put_column_def(&sb, &seq, &d, 0);
    size_t n;
    const uint8_t *p = one_packet(&sb, 2, &n);
    MysqlReader r;
    const uint8_t *z;
    size_t nz;
    uint64_t v;
    uint16_t cs, fl;
    uint32_t len;
    uint8_t t, dec;
    mysql_reader_init(&r, p, n);
    mysql_read_lenenc_str(&r, &z, &nz, NULL);
    assert_int_equal(nz, 3);
    assert_memory_equal(z, "def", 3);
    for (int i = 0; i < 5; i++) assert_int_equal(mysql_read_lenenc_str(&r, &z, &nz, NULL), LP_OK);
    assert_int_equal(nz, strlen(c->zName));  /* org_name */
    assert_memory_equal(z, c->zName, nz);
    mysql_read_lenenc(&r, &v, NULL);
    assert_int_equal(v, 0x0C);
    mysql_read_u16(&r, &cs, NULL);
    mysql_read_u32(&r, &len, NULL);
    mysql_read_u8(&r, &t, NULL);
    mysql_read_u16(&r, &fl, NULL);
    mysql_read_u8(&r, &dec, NULL);
    assert_int_equal(t, type);
    assert_int_equal(cs, charset);
    assert_int_equal(dec, decimals);
    assert_int_equal(fl, flags);
    assert_true(len > 0);
    assert_int_equal(r.i + 2, n);   /* then the two filler bytes */
    strbuf_free(&sb);

    /* COM_FIELD_LIST adds a NULL default value. */
    seq = 1;
    mysql_put_column_def(&sb, &seq, &d, 1);
    p = one_packet(&sb, 1, &n);
    assert_int_equal(p[n - 1], 0xFB);
    strbuf_free(&sb);
}

static void test_column_types(void **state) {
    (void)state;
    const uint16_t num = MYSQL_BINARY_FLAG | MYSQL_NUM_FLAG;
    SqlColumn c = {.zName = "id", .type = SQLCOL_BIGINT,
                   .flags = SQLCOL_F_NOTNULL | SQLCOL_F_PRIKEY, .zTable = "t"};
    check_coldef(&c, MYSQL_TYPE_LONGLONG, 63, 0,
                 num | MYSQL_NOT_NULL_FLAG | MYSQL_PRI_KEY_FLAG);
    c = (SqlColumn){.zName = "b", .type = SQLCOL_BOOL, .zTable = ""};
    check_coldef(&c, MYSQL_TYPE_TINY, 63, 0, num);
    c.type = SQLCOL_INT;
    check_coldef(&c, MYSQL_TYPE_LONG, 63, 0, num);
    c.type = SQLCOL_FLOAT;
    check_coldef(&c, MYSQL_TYPE_FLOAT, 63, 31, num);
    c.type = SQLCOL_DOUBLE;
    check_coldef(&c, MYSQL_TYPE_DOUBLE, 63, 31, num);
    c.type = SQLCOL_TIMESTAMP;
    check_coldef(&c, MYSQL_TYPE_LONGLONG, 63, 0, num);
    c.type = SQLCOL_STRING;
    check_coldef(&c, MYSQL_TYPE_VAR_STRING, 45, 0, 0);
    c.type = SQLCOL_JSON;
    check_coldef(&c, MYSQL_TYPE_VAR_STRING, 45, 0, 0);
    c.type = SQLCOL_VECTOR;
    c.zTable = NULL;    /* tolerated: sent as "" */
    check_coldef(&c, MYSQL_TYPE_VAR_STRING, 45, 0, 0);
}

static void test_row_and_auth_switch(void **state) {
    (void)state;
    SqlCell a[3] = {{"42", 2}, {NULL, 0}, {"", 0}};
    StrBuf sb = {0};
    uint8_t seq = 5;
    mysql_put_row(&sb, &seq, a, 3);
    static const uint8_t aRow[] = {5, 0, 0, 5, 2, '4', '2', 0xFB, 0};
    assert_int_equal(sb.n, sizeof(aRow));
    assert_memory_equal(sb.z, aRow, sizeof(aRow));

    strbuf_reset(&sb);
    seq = 2;
    mysql_put_auth_switch(&sb, &seq, MYSQL_NATIVE_PLUGIN, aScr, 20);
    size_t n;
    const uint8_t *p = one_packet(&sb, 2, &n);
    assert_int_equal(n, 1 + 22 + 21);
    assert_int_equal(p[0], 0xFE);
    assert_string_equal((const char *)p + 1, "mysql_native_password");
    assert_memory_equal(p + 23, aScr, 20);
    assert_int_equal(p[43], 0);
    strbuf_free(&sb);
}

/* ------------------------------------------------------ handshake parse */

static void test_response_encodings(void **state) {
    (void)state;
    static const uint32_t aCaps[] = {
        CAPS_MODERN,
        CAPS_MODERN & ~MYSQL_CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA,
        MYSQL_CLIENT_PROTOCOL_41 | MYSQL_CLIENT_CONNECT_WITH_DB,   /* NUL-terminated auth */
    };
    static const uint8_t aAttr[] = {3, 'k', 'e', 'y', 5, 'v', 'a', 'l', 'u', 'e'};
    for (size_t i = 0; i < LP_ARRAY_SIZE(aCaps); i++) {
        StrBuf sb = {0};
        int bPlugin = (aCaps[i] & MYSQL_CLIENT_PLUGIN_AUTH) != 0;
        build_response(&sb, aCaps[i], "root", aTokSecret, 20, "shop",
                       bPlugin ? "mysql_native_password" : NULL, bPlugin ? aAttr : NULL,
                       sizeof(aAttr));
        MysqlHandshakeResponse r;
        LpError err;
        int rc = mysql_parse_handshake_response((const uint8_t *)sb.z, sb.n, &r, &err);
        if (rc) fail_msg("encoding %zu: %s", i, err.zMsg);
        assert_int_equal(r.caps, aCaps[i]);
        assert_int_equal(r.charset, 45);
        assert_string_equal(r.zUser, "root");
        if (i < 2) {
            assert_int_equal(r.nAuth, 20);
            assert_memory_equal(r.aAuth, aTokSecret, 20);
            assert_string_equal(r.zPlugin, "mysql_native_password");
        } else {
            /* The NUL-terminated form stops at the token's first 0x00,
            ** which is why clients without SECURE_CONNECTION are rare;
            ** this token has none. */
            assert_int_equal(r.nAuth, 20);
            assert_null(r.zPlugin);
        }
        assert_string_equal(r.zDb, "shop");
        assert_int_equal(r.nDb, 4);

        /* Every truncation is either a clean parse that stops at a field
        ** boundary (the optional tail absent) or LP_CORRUPT. */
        for (size_t n = 0; n < sb.n; n++) {
            rc = mysql_parse_handshake_response((const uint8_t *)sb.z, n, &r, &err);
            assert_true(rc == LP_OK || rc == LP_CORRUPT);
        }
        /* Cut inside the user name: refused and named. */
        rc = mysql_parse_handshake_response((const uint8_t *)sb.z, 32 + 2, &r, &err);
        assert_int_equal(rc, LP_CORRUPT);
        assert_non_null(strstr(err.zMsg, "user"));
        strbuf_free(&sb);
    }
}

static void test_response_optional_and_bad(void **state) {
    (void)state;
    StrBuf sb = {0};
    MysqlHandshakeResponse r;
    LpError err;
    /* Flags announce db, plugin and attributes, the packet ends after the
    ** auth response (an empty one): all three absent. */
    build_response(&sb, CAPS_MODERN, "u", NULL, 0, NULL, NULL, NULL, 0);
    assert_int_equal(mysql_parse_handshake_response((const uint8_t *)sb.z, sb.n, &r, &err), LP_OK);
    assert_int_equal(r.nAuth, 0);
    assert_null(r.zDb);
    assert_null(r.zPlugin);

    /* Attribute block whose inner value overruns it. */
    static const uint8_t aBadAttr[] = {1, 'k', 9, 'v'};
    strbuf_reset(&sb);
    build_response(&sb, CAPS_MODERN, "u", aTokSecret, 20, "", "x", aBadAttr, sizeof(aBadAttr));
    assert_int_equal(mysql_parse_handshake_response((const uint8_t *)sb.z, sb.n, &r, &err),
                     LP_CORRUPT);
    assert_non_null(strstr(err.zMsg, "connection attributes"));
    /* Attribute block longer than the packet. */
    strbuf_reset(&sb);
    build_response(&sb, CAPS_MODERN, "u", aTokSecret, 20, "", "x", NULL, 0);
    mysql_put_u8(&sb, 40);
    strbuf_append(&sb, "abc", 3);
    assert_int_equal(mysql_parse_handshake_response((const uint8_t *)sb.z, sb.n, &r, &err),
                     LP_CORRUPT);

    /* Auth response length (1-byte form) beyond the packet. */
    strbuf_reset(&sb);
    build_response(&sb, MYSQL_CLIENT_PROTOCOL_41 | MYSQL_CLIENT_SECURE_CONNECTION, "u", aTokSecret,
                   20, NULL, NULL, NULL, 0);
    assert_int_equal(mysql_parse_handshake_response((const uint8_t *)sb.z, sb.n - 1, &r, &err),
                     LP_CORRUPT);
    assert_non_null(strstr(err.zMsg, "auth response"));

    /* Pre-4.1 client. */
    strbuf_reset(&sb);
    build_response(&sb, MYSQL_CLIENT_SECURE_CONNECTION, "u", NULL, 0, NULL, NULL, NULL, 0);
    assert_int_equal(mysql_parse_handshake_response((const uint8_t *)sb.z, sb.n, &r, &err),
                     LP_CORRUPT);
    assert_non_null(strstr(err.zMsg, "4.1"));

    /* SSLRequest: the 32-byte prefix alone. */
    strbuf_reset(&sb);
    build_response(&sb, CAPS_MODERN | MYSQL_CLIENT_SSL, "u", NULL, 0, NULL, NULL, NULL, 0);
    assert_int_equal(mysql_parse_handshake_response((const uint8_t *)sb.z, 32, &r, &err),
                     LP_CORRUPT);
    assert_non_null(strstr(err.zMsg, "SSL"));

    /* Database announced and started but not terminated. */
    strbuf_reset(&sb);
    build_response(&sb, MYSQL_CLIENT_PROTOCOL_41 | MYSQL_CLIENT_SECURE_CONNECTION |
                            MYSQL_CLIENT_CONNECT_WITH_DB,
                   "u", NULL, 0, NULL, NULL, NULL, 0);
    strbuf_append(&sb, "db", 2);
    assert_int_equal(mysql_parse_handshake_response((const uint8_t *)sb.z, sb.n, &r, &err),
                     LP_CORRUPT);
    assert_non_null(strstr(err.zMsg, "database"));
    strbuf_free(&sb);
}

/* ------------------------------------------------------------- commands */

static void test_commands(void **state) {
    (void)state;
    MysqlCommand c;
    LpError err;
    assert_int_equal(mysql_parse_command(NULL, 0, &c, &err), LP_CORRUPT);

    static const uint8_t aQuery[] = {MYSQL_COM_QUERY, 's', 'e', 'l'};
    assert_int_equal(mysql_parse_command(aQuery, sizeof(aQuery), &c, &err), LP_OK);
    assert_int_equal(c.cmd, MYSQL_COM_QUERY);
    assert_int_equal(c.nArg, 3);
    assert_memory_equal(c.pArg, "sel", 3);

    static const uint8_t aList[] = {MYSQL_COM_FIELD_LIST, 't', '1', 0, '%'};
    assert_int_equal(mysql_parse_command(aList, sizeof(aList), &c, &err), LP_OK);
    assert_string_equal(c.zTable, "t1");
    assert_int_equal(c.nTable, 2);
    assert_int_equal(c.nWild, 1);
    assert_int_equal(c.pWild[0], '%');
    assert_int_equal(mysql_parse_command(aList, 3, &c, &err), LP_CORRUPT);
    assert_non_null(strstr(err.zMsg, "COM_FIELD_LIST"));

    static const uint8_t aOpt[] = {MYSQL_COM_SET_OPTION, 1, 0};
    assert_int_equal(mysql_parse_command(aOpt, sizeof(aOpt), &c, &err), LP_OK);
    assert_int_equal(c.option, MYSQL_OPTION_MULTI_STATEMENTS_OFF);
    assert_int_equal(mysql_parse_command(aOpt, 2, &c, &err), LP_CORRUPT);

    static const uint8_t aOther[] = {0x16, 1, 2};   /* COM_STMT_PREPARE: parsed, not judged */
    assert_int_equal(mysql_parse_command(aOther, sizeof(aOther), &c, &err), LP_OK);
    assert_int_equal(c.cmd, 0x16);
    assert_int_equal(c.nArg, 2);
}

/* -------------------------------------------------- native password */

static void test_native_password(void **state) {
    (void)state;
    uint8_t aHash[20], aTok[20];
    size_t nTok;
    assert_int_equal(mysql_native_hash("secret", 6, aHash), LP_OK);
    assert_memory_equal(aHash, aHashSecret, 20);
    assert_int_equal(mysql_native_token("secret", 6, aScr, aTok, &nTok), LP_OK);
    assert_int_equal(nTok, 20);
    assert_memory_equal(aTok, aTokSecret, 20);

    assert_true(mysql_native_verify(aScr, aHashSecret, aTokSecret, 20));
    /* Wrong password, damaged token, short token, other scramble. */
    assert_int_equal(mysql_native_token("Secret", 6, aScr, aTok, &nTok), LP_OK);
    assert_false(mysql_native_verify(aScr, aHashSecret, aTok, 20));
    memcpy(aTok, aTokSecret, 20);
    aTok[19] ^= 1;
    assert_false(mysql_native_verify(aScr, aHashSecret, aTok, 20));
    assert_false(mysql_native_verify(aScr, aHashSecret, aTokSecret, 19));
    assert_false(mysql_native_verify(aScr, aHashSecret, NULL, 0));
    uint8_t aScr2[20];
    memcpy(aScr2, aScr, 20);
    aScr2[0] = 'z';
    assert_false(mysql_native_verify(aScr2, aHashSecret, aTokSecret, 20));

    /* The empty password sends no token. */
    assert_int_equal(mysql_native_token("", 0, aScr, aTok, &nTok), LP_OK);
    assert_int_equal(nTok, 0);
}

static void test_scramble(void **state) {
    (void)state;
    uint8_t a[20], b[20];
    assert_int_equal(mysql_scramble_new(a, NULL), LP_OK);
    assert_int_equal(mysql_scramble_new(b, NULL), LP_OK);
    for (int i = 0; i < 20; i++) {
        assert_true(a[i] >= 0x21 && a[i] <= 0x7E);
    }
    assert_memory_not_equal(a, b, 20);
}

/* --------------------------------------------------------------- config */

static void test_config_values(void **state) {
    (void)state;
    LoupeConfig c;
    LpError err;
    size_t n;
    char *zHost = NULL;
    int port;
    assert_int_equal(config_init(&c, &err), LP_OK);
    assert_string_equal(c.zDataDir, "./data");
    assert_string_equal(c.zMysqlHost, "127.0.0.1");
    assert_int_equal(c.mysqlPort, 9306);
    assert_int_equal(c.httpPort, 9308);
    assert_int_equal(c.nMaxConn, 1024);
    assert_int_equal(c.nMaxPacket, 16u << 20);
    assert_null(c.zUser);

    assert_int_equal(config_parse_size("16M", &n, &err), LP_OK);
    assert_int_equal(n, 16u << 20);
    assert_int_equal(config_parse_size("2k", &n, &err), LP_OK);
    assert_int_equal(n, 2048);
    assert_int_equal(config_parse_size("1G", &n, &err), LP_OK);
    assert_int_equal(n, 1u << 30);
    assert_int_equal(config_parse_size("123", &n, &err), LP_OK);
    assert_int_equal(n, 123);
    assert_int_equal(config_parse_size("12X", &n, &err), LP_BADINPUT);
    assert_int_equal(config_parse_size("-1", &n, &err), LP_BADINPUT);
    assert_int_equal(config_parse_size("", &n, &err), LP_BADINPUT);

    assert_int_equal(config_parse_addr("0.0.0.0:0", "x", &zHost, &port, &err), LP_OK);
    assert_string_equal(zHost, "0.0.0.0");
    assert_int_equal(port, 0);
    assert_int_equal(config_parse_addr("[::1]:9306", "x", &zHost, &port, &err), LP_OK);
    assert_string_equal(zHost, "::1");
    assert_int_equal(config_parse_addr(":7", "dflt", &zHost, &port, &err), LP_OK);
    assert_string_equal(zHost, "dflt");
    assert_int_equal(port, 7);
    assert_int_equal(config_parse_addr("8", "dflt", &zHost, &port, &err), LP_OK);
    assert_int_equal(port, 8);
    assert_int_equal(config_parse_addr("h:65536", "x", &zHost, &port, &err), LP_BADINPUT);
    assert_int_equal(config_parse_addr("::1:5", "x", &zHost, &port, &err), LP_BADINPUT);
    assert_int_equal(config_parse_addr("h:", "x", &zHost, &port, &err), LP_BADINPUT);
    free(zHost);

    assert_int_equal(config_set(&c, "threads", "0", &err), LP_BADINPUT);
    assert_non_null(strstr(err.zMsg, "'threads'"));
    assert_int_equal(config_set(&c, "threads", "3", &err), LP_OK);
    assert_int_equal(c.nThreads, 3);
    assert_int_equal(config_set(&c, "max_packet_size", "100", &err), LP_BADINPUT);
    assert_int_equal(config_set(&c, "bogus", "1", &err), LP_BADINPUT);
    assert_string_equal(err.zMsg, "unknown key 'bogus'");
    assert_int_equal(config_set(&c, "log_level", "loud", &err), LP_BADINPUT);

    /* password and password_sha1 store the same hash. */
    assert_int_equal(config_set(&c, "password", "secret", &err), LP_OK);
    assert_true(c.bPassword);
    assert_memory_equal(c.aPwHash, aHashSecret, 20);
    assert_int_equal(config_check(&c, &err), LP_BADINPUT);     /* no user */
    assert_int_equal(config_set(&c, "user", "root", &err), LP_OK);
    assert_int_equal(config_check(&c, &err), LP_OK);
    memset(c.aPwHash, 0, 20);
    assert_int_equal(config_set(&c, "password_sha1", "*14E65567ABDB5135D0CFD9A70B3032C179A49EE7",
                                &err), LP_OK);
    assert_memory_equal(c.aPwHash, aHashSecret, 20);
    assert_int_equal(config_set(&c, "password_sha1", "14e6", &err), LP_BADINPUT);
    config_free(&c);
}

static void test_config_file(void **state) {
    (void)state;
    char zPath[] = "/tmp/test_mysql_proto_XXXXXX";
    int fd = mkstemp(zPath);
    assert_true(fd >= 0);
    static const char zGood[] =
        "# loupe\n"
        "\n"
        "data_dir = /tmp/x   # trailing comment\n"
        "  listen_mysql=127.0.0.1:0\n"
        "password = \"p#ss word\"\n"
        "user = admin\n"
        "max_packet_size = 1M\n";
    assert_int_equal(write(fd, zGood, sizeof(zGood) - 1), (ssize_t)sizeof(zGood) - 1);
    close(fd);
    LoupeConfig c;
    LpError err;
    assert_int_equal(config_init(&c, &err), LP_OK);
    int rc = config_load_file(&c, zPath, &err);
    if (rc) fail_msg("%s", err.zMsg);
    assert_string_equal(c.zDataDir, "/tmp/x");
    assert_int_equal(c.mysqlPort, 0);
    assert_string_equal(c.zUser, "admin");
    assert_int_equal(c.nMaxPacket, 1u << 20);
    uint8_t aHash[20];
    mysql_native_hash("p#ss word", 9, aHash);
    assert_memory_equal(c.aPwHash, aHash, 20);
    config_free(&c);

    /* The first bad line is reported with file, line and key. */
    static const char zBad[] = "threads = 2\nmax_connections = lots\n";
    FILE *f = fopen(zPath, "w");
    assert_non_null(f);
    fputs(zBad, f);
    fclose(f);
    assert_int_equal(config_init(&c, &err), LP_OK);
    assert_int_equal(config_load_file(&c, zPath, &err), LP_BADINPUT);
    char zWant[128];
    snprintf(zWant, sizeof(zWant), "%s:2: bad value for 'max_connections'", zPath);
    assert_non_null(strstr(err.zMsg, zWant));
    f = fopen(zPath, "w");
    assert_non_null(f);
    fputs("colour = blue\n", f);
    fclose(f);
    assert_int_equal(config_load_file(&c, zPath, &err), LP_BADINPUT);
    snprintf(zWant, sizeof(zWant), "%s:1: unknown key 'colour'", zPath);
    assert_string_equal(err.zMsg, zWant);
    f = fopen(zPath, "w");
    assert_non_null(f);
    fputs("just words\n", f);
    fclose(f);
    assert_int_equal(config_load_file(&c, zPath, &err), LP_BADINPUT);
    unlink(zPath);
    assert_int_equal(config_load_file(&c, zPath, &err), LP_IOERR);
    config_free(&c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lenenc_boundaries),
        cmocka_unit_test(test_lenenc_invalid_prefix),
        cmocka_unit_test(test_lenenc_str),
        cmocka_unit_test(test_fixed_and_nulstr),
        cmocka_unit_test(test_frame_small),
        cmocka_unit_test(test_frame_too_big_from_header),
        cmocka_unit_test(test_frame_split),
        cmocka_unit_test(test_frame_multipart_seq),
        cmocka_unit_test(test_ok_err_eof_bytes),
        cmocka_unit_test(test_handshake_layout),
        cmocka_unit_test(test_column_types),
        cmocka_unit_test(test_row_and_auth_switch),
        cmocka_unit_test(test_response_encodings),
        cmocka_unit_test(test_response_optional_and_bad),
        cmocka_unit_test(test_commands),
        cmocka_unit_test(test_native_password),
        cmocka_unit_test(test_scramble),
        cmocka_unit_test(test_config_values),
        cmocka_unit_test(test_config_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
