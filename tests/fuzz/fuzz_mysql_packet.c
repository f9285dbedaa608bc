/*
** fuzz_mysql_packet.c — libFuzzer target for the MySQL protocol decoder
** (src/server/mysql/packet.c), no sockets and no SQL engine.
**
** The input is a byte stream as a client would send it. It goes through
** the same path as the server's: frames are scanned one after the other
** (the first one's sequence id is taken from its header, so inputs are
** not all rejected for their sequence id), each complete frame is joined
** and its payload parsed both as a HandshakeResponse41 and as a command.
** The whole input is also parsed directly as both, and walked as a list
** of length-encoded fields, so the parsers see every byte pattern even
** when the framing would stop first.
**
** Properties checked beyond "no crash, no out-of-bounds read":
**  - a parsed handshake response's fields lie inside the payload and its
**    NUL-terminated strings are terminated where the lengths say;
**  - building a packet from the input as payload (split at 0xFFFFFF like
**    any other), then scanning and joining it, gives the input back.
*/
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "server/mysql/packet.h"

#define MAX_PACKET (1u << 20)

static void check(int b) {
    if (!b) __builtin_trap();
}

static int inside(const void *p, size_t n, const uint8_t *a, size_t na) {
    const uint8_t *q = p;
    return q >= a && q + n <= a + na;
}

static void parse_payload(const uint8_t *p, size_t n) {
    MysqlHandshakeResponse r;
    LpError err;
    if (mysql_parse_handshake_response(p, n, &r, &err) == LP_OK) {
        check(inside(r.zUser, r.nUser + 1, p, n) && r.zUser[r.nUser] == 0);
        check(r.nAuth == 0 || inside(r.aAuth, r.nAuth, p, n));
        if (r.zDb) check(inside(r.zDb, r.nDb + 1, p, n) && r.zDb[r.nDb] == 0);
        if (r.zPlugin) check(inside(r.zPlugin, r.nPlugin + 1, p, n) && r.zPlugin[r.nPlugin] == 0);
    }
    MysqlCommand c;
    if (mysql_parse_command(p, n, &c, &err) == LP_OK) {
        check(c.nArg + 1 == n);
        if (c.cmd == MYSQL_COM_FIELD_LIST) {
            check(inside(c.zTable, c.nTable + 1, p, n) && c.zTable[c.nTable] == 0);
            check(inside(c.pWild, c.nWild, p, n));
        }
    }
}

/* Reads lenenc fields until one fails; each must stay in bounds. */
static void walk_fields(const uint8_t *p, size_t n) {
    MysqlReader r;
    mysql_reader_init(&r, p, n);
    for (;;) {
        const uint8_t *z;
        size_t nz;
        size_t iBefore = r.i;
        if (mysql_read_lenenc_str(&r, &z, &nz, NULL) != LP_OK) {
            check(r.i == iBefore);
            break;
        }
        check(inside(z, nz, p, n) && r.i > iBefore && r.i <= n);
    }
}

static void round_trip(const uint8_t *p, size_t n) {
    StrBuf sb = {0};
    uint8_t seq = n ? p[0] : 0;
    size_t off = mysql_packet_begin(&sb);
    strbuf_append(&sb, p, n);
    mysql_packet_end(&sb, off, &seq);
    if (sb.oom) return;
    MysqlFrame f;
    int bDone;
    int rc = mysql_frame_scan((uint8_t *)sb.z, sb.n, n ? p[0] : 0, SIZE_MAX, &f, &bDone, NULL);
    check(rc == LP_OK && bDone && f.nWire == sb.n && f.nPayload == n && f.seqNext == seq);
    const uint8_t *q = mysql_frame_join((uint8_t *)sb.z, &f);
    check(n == 0 || memcmp(q, p, n) == 0);
    strbuf_free(&sb);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* The join works in place: scan a private copy, as the server scans
    ** its own input buffer. */
    uint8_t *a = malloc(size ? size : 1);
    if (!a) return 0;
    memcpy(a, data, size);
    size_t off = 0;
    uint8_t seq = size >= 4 ? a[3] : 0;
    while (off < size) {
        MysqlFrame f;
        int bDone;
        LpError err;
        int rc = mysql_frame_scan(a + off, size - off, seq, MAX_PACKET, &f, &bDone, &err);
        if (rc != LP_OK || !bDone) {
            check(rc == LP_OK || rc == LP_LIMIT || rc == LP_CORRUPT);
            if (rc == LP_LIMIT) check(f.nPayload > MAX_PACKET);
            break;
        }
        check(f.nWire <= size - off && f.nPayload + 4 * (size_t)f.nPart == f.nWire);
        const uint8_t *p = mysql_frame_join(a + off, &f);
        parse_payload(p, f.nPayload);
        off += f.nWire;
        seq = 0;    /* each command starts a new exchange */
    }
    free(a);

    parse_payload(data, size);
    walk_fields(data, size);
    if (size < 4096) round_trip(data, size);
    return 0;
}
