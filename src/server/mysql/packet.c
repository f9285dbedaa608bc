/* packet.c — see packet.h.
**
** Layouts of the packets built and parsed here (protocol 4.1):
**
**   Handshake v10     int<1> 10 | str<NUL> version | int<4> connection id |
**                     scramble[0..8] | 0x00 | caps low int<2> | int<1>
**                     charset | int<2> status | caps high int<2> |
**                     int<1> 21 (scramble + NUL) | 10 x 0x00 |
**                     scramble[8..20] + 0x00 | str<NUL> plugin
**   OK                0x00 | int<lenenc> affected | int<lenenc> last id |
**                     int<2> status | int<2> warnings | str<EOF> info
**   ERR               0xFF | int<2> errno | '#' | 5 x sqlstate | str<EOF> msg
**   EOF               0xFE | int<2> warnings | int<2> status
**   ColumnDef41       str<lenenc> "def", schema, table, org_table, name,
**                     org_name | int<lenenc> 0x0C | int<2> charset |
**                     int<4> length | int<1> type | int<2> flags |
**                     int<1> decimals | 0x00 0x00 [| str<lenenc> default,
**                     COM_FIELD_LIST only]
**   Text row          str<lenenc> per cell, 0xFB for NULL
**   AuthSwitchRequest 0xFE | str<NUL> plugin | plugin data
**   HandshakeResp41   int<4> caps | int<4> max packet | int<1> charset |
**                     23 x filler | str<NUL> user | auth response (lenenc,
**                     1-byte length, or NUL-terminated, by caps) |
**                     [str<NUL> db] | [str<NUL> plugin] |
**                     [int<lenenc> n | n bytes of key/value str<lenenc>]
*/
#include "server/mysql/packet.h"

#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

/* ------------------------------------------------------------- framing */

/* The 3-byte little-endian length at the start of a packet header. */
static uint32_t get_u24(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16;
}

/* Walks the parts of one logical packet. Each step looks at one header:
** its sequence id first (a client out of step is told so even when its
** packet is also too large), then the running total against nMax, and
** only then whether the part's payload has arrived. So the total is
** checked as soon as a header is visible, never after buffering it. */
int mysql_frame_scan(const uint8_t *a, size_t n, uint8_t seq, size_t nMax, MysqlFrame *f,
                     int *pbDone, LpError *err) {
    size_t off = 0;         /* start of the part being looked at */
    size_t nPayload = 0;    /* payload bytes declared so far */
    int nPart = 0;
    *pbDone = 0;
    memset(f, 0, sizeof(*f));
    while (n - off >= MYSQL_HEADER_LEN) {
        uint32_t len = get_u24(a + off);
        uint8_t s = a[off + 3];
        nPart++;
        if (s != seq) {
            f->seqNext = (uint8_t)(s + 1);
            return lp_err_set(err, LP_CORRUPT,
                              "packet part %d has sequence id %u, expected %u", nPart,
                              (unsigned)s, (unsigned)seq);
        }
        seq++;
        nPayload += len;
        /* Refused on the declaration alone: the payload is not waited for. */
        if (nPayload > nMax) {
            f->nPayload = nPayload;
            f->nPart = nPart;
            f->seqNext = seq;
            return lp_err_set(err, LP_LIMIT, "packet of %zu bytes exceeds max_allowed_packet (%zu)",
                              nPayload, nMax);
        }
        if (n - off - MYSQL_HEADER_LEN < len) return LP_OK;    /* payload incomplete */
        off += MYSQL_HEADER_LEN + len;
        if (len < MYSQL_MAX_PART) {
            f->nWire = off;
            f->nPayload = nPayload;
            f->nPart = nPart;
            f->seqNext = seq;
            *pbDone = 1;
            return LP_OK;
        }
    }
    return LP_OK;   /* a header is incomplete */
}

/* Part k's payload moves down by 4*k bytes (the k inner headers before
** it disappear); moving in order never overwrites bytes not yet moved,
** because every destination lies below its source. */
uint8_t *mysql_frame_join(uint8_t *a, const MysqlFrame *f) {
    uint8_t *pDst = a + MYSQL_HEADER_LEN + get_u24(a);
    size_t off = MYSQL_HEADER_LEN + get_u24(a);
    for (int i = 1; i < f->nPart; i++) {
        uint32_t len = get_u24(a + off);
        memmove(pDst, a + off + MYSQL_HEADER_LEN, len);
        pDst += len;
        off += MYSQL_HEADER_LEN + len;
    }
    return a + MYSQL_HEADER_LEN;
}

/* ------------------------------------------------------------- reading */

void mysql_reader_init(MysqlReader *r, const void *p, size_t n) {
    r->p = p;
    r->n = n;
    r->i = 0;
}

/* Every reader checks the bytes left (r->n - r->i, which cannot wrap:
** i <= n always) before touching any, and leaves r->i where it was on
** failure, so a caller may try another interpretation. */
static int truncated(MysqlReader *r, LpError *err, const char *zWhat) {
    return lp_err_setpos(err, LP_CORRUPT, (int64_t)r->i, "truncated %s at byte %zu of %zu",
                         zWhat, r->i, r->n);
}

int mysql_read_bytes(MysqlReader *r, size_t n, const uint8_t **pp, LpError *err) {
    if (r->n - r->i < n) return truncated(r, err, "field");
    *pp = r->p + r->i;
    r->i += n;
    return LP_OK;
}

int mysql_read_u8(MysqlReader *r, uint8_t *pv, LpError *err) {
    if (r->n - r->i < 1) return truncated(r, err, "int<1>");
    *pv = r->p[r->i++];
    return LP_OK;
}

int mysql_read_u16(MysqlReader *r, uint16_t *pv, LpError *err) {
    if (r->n - r->i < 2) return truncated(r, err, "int<2>");
    const uint8_t *p = r->p + r->i;
    *pv = (uint16_t)(p[0] | p[1] << 8);
    r->i += 2;
    return LP_OK;
}

int mysql_read_u32(MysqlReader *r, uint32_t *pv, LpError *err) {
    if (r->n - r->i < 4) return truncated(r, err, "int<4>");
    const uint8_t *p = r->p + r->i;
    *pv = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    r->i += 4;
    return LP_OK;
}

int mysql_read_lenenc(MysqlReader *r, uint64_t *pv, LpError *err) {
    if (r->n - r->i < 1) return truncated(r, err, "int<lenenc>");
    uint8_t b = r->p[r->i];
    size_t nByte;
    if (b < 0xFB) {
        *pv = b;
        r->i++;
        return LP_OK;
    }
    /* 0xFB means NULL and 0xFF starts an ERR packet: neither is a number,
    ** and a field that needs a number must not silently read as one. */
    switch (b) {
    case 0xFC: nByte = 2; break;
    case 0xFD: nByte = 3; break;
    case 0xFE: nByte = 8; break;
    default:
        return lp_err_setpos(err, LP_CORRUPT, (int64_t)r->i,
                             "invalid int<lenenc> prefix 0x%02X at byte %zu", b, r->i);
    }
    if (r->n - r->i - 1 < nByte) return truncated(r, err, "int<lenenc>");
    uint64_t v = 0;
    for (size_t k = 0; k < nByte; k++) v |= (uint64_t)r->p[r->i + 1 + k] << (8 * k);
    *pv = v;
    r->i += 1 + nByte;
    return LP_OK;
}

int mysql_read_lenenc_str(MysqlReader *r, const uint8_t **pz, size_t *pn, LpError *err) {
    size_t iStart = r->i;
    uint64_t len = 0; /* set on success; gcc -O3 cannot always see that */
    int rc = mysql_read_lenenc(r, &len, err);
    if (rc) return rc;
    /* Compared in 64 bits: a declared length near 2^64 cannot wrap. */
    if (len > r->n - r->i) {
        r->i = iStart;
        return truncated(r, err, "str<lenenc>");
    }
    *pz = r->p + r->i;
    *pn = (size_t)len;
    r->i += (size_t)len;
    return LP_OK;
}

int mysql_read_nulstr(MysqlReader *r, const char **pz, size_t *pn, LpError *err) {
    const uint8_t *p = r->p + r->i;
    const uint8_t *pEnd = r->i < r->n ? memchr(p, 0, r->n - r->i) : NULL;
    if (!pEnd) return lp_err_setpos(err, LP_CORRUPT, (int64_t)r->i,
                                    "unterminated string at byte %zu of %zu", r->i, r->n);
    *pz = (const char *)p;
    *pn = (size_t)(pEnd - p);
    r->i += *pn + 1;
    return LP_OK;
}

/* ------------------------------------------------------------- writing */

void mysql_put_u8(StrBuf *out, uint8_t v) {
    strbuf_appendc(out, (char)v);
}

/* nByte bytes of v, least significant first, whatever the host order. */
static void put_le(StrBuf *out, uint64_t v, int nByte) {
    uint8_t b[8];
    for (int k = 0; k < nByte; k++) b[k] = (uint8_t)(v >> (8 * k));
    strbuf_append(out, b, (size_t)nByte);
}

void mysql_put_u16(StrBuf *out, uint16_t v) { put_le(out, v, 2); }
void mysql_put_u24(StrBuf *out, uint32_t v) { put_le(out, v, 3); }
void mysql_put_u32(StrBuf *out, uint32_t v) { put_le(out, v, 4); }
void mysql_put_u64(StrBuf *out, uint64_t v) { put_le(out, v, 8); }

/* The shortest form; 0xFB..0xFF are prefixes, so 251 already needs the
** 3-byte one. */
void mysql_put_lenenc(StrBuf *out, uint64_t v) {
    if (v < 0xFB) {
        mysql_put_u8(out, (uint8_t)v);
    } else if (v <= 0xFFFF) {
        mysql_put_u8(out, 0xFC);
        put_le(out, v, 2);
    } else if (v <= 0xFFFFFF) {
        mysql_put_u8(out, 0xFD);
        put_le(out, v, 3);
    } else {
        mysql_put_u8(out, 0xFE);
        put_le(out, v, 8);
    }
}

void mysql_put_lenenc_str(StrBuf *out, const void *p, size_t n) {
    mysql_put_lenenc(out, n);
    strbuf_append(out, p, n);
}

/* str<NUL>: the string and its terminator. */
static void put_nulstr(StrBuf *out, const char *z) {
    strbuf_append(out, z, strlen(z) + 1);
}

/* The header is written last, when the payload length is known; until
** then four zero bytes hold its place. Builders return offsets, not
** pointers, because appending may move the buffer. */
size_t mysql_packet_begin(StrBuf *out) {
    size_t off = out->n;
    strbuf_append(out, "\0\0\0\0", MYSQL_HEADER_LEN);
    return off;
}

static void put_header(uint8_t *p, uint32_t len, uint8_t seq) {
    p[0] = (uint8_t)len;
    p[1] = (uint8_t)(len >> 8);
    p[2] = (uint8_t)(len >> 16);
    p[3] = seq;
}

void mysql_packet_end(StrBuf *out, size_t off, uint8_t *pSeq) {
    if (out->oom) return;
    size_t nPayload = out->n - off - MYSQL_HEADER_LEN;
    if (nPayload < MYSQL_MAX_PART) {
        put_header((uint8_t *)out->z + off, (uint32_t)nPayload, (*pSeq)++);
        return;
    }
    /* nPart parts: full ones of MYSQL_MAX_PART bytes, then a shorter one
    ** (empty when nPayload is an exact multiple). Make room for the extra
    ** headers, then move the parts up, last first, so no byte is
    ** overwritten before it is moved. */
    size_t nPart = nPayload / MYSQL_MAX_PART + 1;
    size_t nExtra = (nPart - 1) * MYSQL_HEADER_LEN;
    if (!strbuf_reserve(out, nExtra)) return;
    uint8_t *a = (uint8_t *)out->z + off;
    for (size_t j = nPart - 1; j >= 1; j--) {
        size_t len = j == nPart - 1 ? nPayload - j * MYSQL_MAX_PART : MYSQL_MAX_PART;
        memmove(a + j * (MYSQL_MAX_PART + MYSQL_HEADER_LEN) + MYSQL_HEADER_LEN,
                a + MYSQL_HEADER_LEN + j * MYSQL_MAX_PART, len);
    }
    for (size_t j = 0; j < nPart; j++) {
        size_t len = j == nPart - 1 ? nPayload - j * MYSQL_MAX_PART : MYSQL_MAX_PART;
        put_header(a + j * (MYSQL_MAX_PART + MYSQL_HEADER_LEN), (uint32_t)len, (*pSeq)++);
    }
    strbuf_commit(out, nExtra);
}

void mysql_put_handshake(StrBuf *out, uint8_t *pSeq, const MysqlHandshake *h) {
    static const uint8_t aZero[10] = {0};
    size_t off = mysql_packet_begin(out);
    mysql_put_u8(out, 10);
    put_nulstr(out, h->zVersion);
    mysql_put_u32(out, h->connId);
    strbuf_append(out, h->aScramble, 8);
    mysql_put_u8(out, 0);
    mysql_put_u16(out, (uint16_t)(h->caps & 0xFFFF));
    mysql_put_u8(out, h->charset);
    mysql_put_u16(out, h->status);
    mysql_put_u16(out, (uint16_t)(h->caps >> 16));
    /* Length of the whole auth-plugin-data, its NUL included (21); the
    ** second part is then max(13, 21 - 8) = 13 bytes. */
    mysql_put_u8(out, (h->caps & MYSQL_CLIENT_PLUGIN_AUTH) ? MYSQL_SCRAMBLE_LEN + 1 : 0);
    strbuf_append(out, aZero, sizeof(aZero));   /* reserved */
    if (h->caps & MYSQL_CLIENT_SECURE_CONNECTION) {
        strbuf_append(out, h->aScramble + 8, MYSQL_SCRAMBLE_LEN - 8);
        mysql_put_u8(out, 0);
    }
    if (h->caps & MYSQL_CLIENT_PLUGIN_AUTH) put_nulstr(out, h->zPlugin);
    mysql_packet_end(out, off, pSeq);
}

void mysql_put_ok(StrBuf *out, uint8_t *pSeq, uint64_t nAffected, uint64_t iLastId,
                  uint16_t status, uint16_t nWarn, const char *zInfo) {
    size_t off = mysql_packet_begin(out);
    mysql_put_u8(out, 0x00);
    mysql_put_lenenc(out, nAffected);
    mysql_put_lenenc(out, iLastId);
    mysql_put_u16(out, status);
    mysql_put_u16(out, nWarn);
    /* Without CLIENT_SESSION_TRACK (not advertised) the info text is the
    ** rest of the packet, not a str<lenenc>. */
    if (zInfo) strbuf_appendz(out, zInfo);
    mysql_packet_end(out, off, pSeq);
}

void mysql_put_err(StrBuf *out, uint8_t *pSeq, uint16_t iErrno, const char *zSqlState,
                   const char *zMsg) {
    char aState[5] = {'H', 'Y', '0', '0', '0'};
    if (zSqlState) {
        /* Exactly five characters on the wire, whatever the caller gave. */
        for (int k = 0; k < 5 && zSqlState[k]; k++) aState[k] = zSqlState[k];
    }
    size_t off = mysql_packet_begin(out);
    mysql_put_u8(out, 0xFF);
    mysql_put_u16(out, iErrno);
    mysql_put_u8(out, '#');
    strbuf_append(out, aState, 5);
    strbuf_appendz(out, zMsg);
    mysql_packet_end(out, off, pSeq);
}

void mysql_put_eof(StrBuf *out, uint8_t *pSeq, uint16_t nWarn, uint16_t status) {
    size_t off = mysql_packet_begin(out);
    mysql_put_u8(out, 0xFE);
    mysql_put_u16(out, nWarn);
    mysql_put_u16(out, status);
    mysql_packet_end(out, off, pSeq);
}

void mysql_put_column_def(StrBuf *out, uint8_t *pSeq, const MysqlColumnDef *d, int bFieldList) {
    size_t off = mysql_packet_begin(out);
    mysql_put_lenenc_str(out, "def", 3);
    mysql_put_lenenc_str(out, d->zSchema, strlen(d->zSchema));
    mysql_put_lenenc_str(out, d->zTable, strlen(d->zTable));
    mysql_put_lenenc_str(out, d->zOrgTable, strlen(d->zOrgTable));
    mysql_put_lenenc_str(out, d->zName, strlen(d->zName));
    mysql_put_lenenc_str(out, d->zOrgName, strlen(d->zOrgName));
    mysql_put_lenenc(out, 0x0C);   /* length of the fixed fields that follow */
    mysql_put_u16(out, d->charset);
    mysql_put_u32(out, d->length);
    mysql_put_u8(out, d->type);
    mysql_put_u16(out, d->flags);
    mysql_put_u8(out, d->decimals);
    mysql_put_u16(out, 0);  /* filler */
    if (bFieldList) mysql_put_u8(out, 0xFB);  /* no default value */
    mysql_packet_end(out, off, pSeq);
}

void mysql_column_from_sql(const SqlColumn *c, MysqlColumnDef *d) {
    /* Numbers are sent as text too; charset 63 (binary) with BINARY|NUM
    ** is how MySQL marks numeric columns, and drivers convert by type
    ** (pymysql turns LONGLONG into int, FLOAT/DOUBLE into float). */
    const char *zTable = c->zTable ? c->zTable : "";
    uint16_t num = MYSQL_BINARY_FLAG | MYSQL_NUM_FLAG;
    d->zSchema = "";
    d->zTable = zTable;
    d->zOrgTable = zTable;
    d->zName = c->zName;
    d->zOrgName = c->zName;
    d->charset = MYSQL_CHARSET_BINARY;
    d->decimals = 0;
    switch (c->type) {
    case SQLCOL_BOOL:
        d->type = MYSQL_TYPE_TINY, d->length = 1, d->flags = num;
        break;
    case SQLCOL_INT:
        d->type = MYSQL_TYPE_LONG, d->length = 11, d->flags = num;
        break;
    case SQLCOL_BIGINT:
    case SQLCOL_TIMESTAMP:
        /* Timestamps travel as signed 64-bit unix seconds: any value the
        ** table stores, before 1970 or after 2106 included, fits. */
        d->type = MYSQL_TYPE_LONGLONG, d->length = 20, d->flags = num;
        break;
    case SQLCOL_FLOAT:
        d->type = MYSQL_TYPE_FLOAT, d->length = 12, d->flags = num, d->decimals = 31;
        break;
    case SQLCOL_DOUBLE:
        d->type = MYSQL_TYPE_DOUBLE, d->length = 22, d->flags = num, d->decimals = 31;
        break;
    case SQLCOL_STRING:
    case SQLCOL_JSON:
    case SQLCOL_VECTOR:
    case SQLCOL_MULTI:
    default:
        /* 255 characters of up to 4 bytes, as a VARCHAR(255) reports it;
        ** clients use it for display width only. */
        d->type = MYSQL_TYPE_VAR_STRING, d->length = 1020, d->flags = 0;
        d->charset = MYSQL_CHARSET_UTF8MB4;
        break;
    }
    if (c->flags & SQLCOL_F_NOTNULL) d->flags |= MYSQL_NOT_NULL_FLAG;
    if (c->flags & SQLCOL_F_PRIKEY) d->flags |= MYSQL_PRI_KEY_FLAG;
}

void mysql_put_row(StrBuf *out, uint8_t *pSeq, const SqlCell *aCell, int nCell) {
    size_t off = mysql_packet_begin(out);
    for (int i = 0; i < nCell; i++) {
        if (aCell[i].z) {
            mysql_put_lenenc_str(out, aCell[i].z, aCell[i].n);
        } else {
            mysql_put_u8(out, 0xFB);
        }
    }
    mysql_packet_end(out, off, pSeq);
}

void mysql_put_auth_switch(StrBuf *out, uint8_t *pSeq, const char *zPlugin,
                           const uint8_t *aData, size_t nData) {
    size_t off = mysql_packet_begin(out);
    mysql_put_u8(out, 0xFE);
    put_nulstr(out, zPlugin);
    /* The data ends with a NUL, as MySQL sends it; clients take the first
    ** 20 bytes as the scramble. */
    strbuf_append(out, aData, nData);
    mysql_put_u8(out, 0);
    mysql_packet_end(out, off, pSeq);
}

/* ------------------------------------------------------------- parsing */

/* Adds the field name to a reader error. */
static int field_err(LpError *err, int rc, const char *zField) {
    if (err) lp_err_prefix(err, "handshake response: %s", zField);
    return rc;
}

/* Checks that the connection attributes block is a sequence of
** key/value str<lenenc> pairs that exactly fills it. */
static int check_attrs(const uint8_t *p, size_t n, LpError *err) {
    MysqlReader r;
    mysql_reader_init(&r, p, n);
    while (r.i < r.n) {
        const uint8_t *z;
        size_t nz;
        int rc = mysql_read_lenenc_str(&r, &z, &nz, err);
        if (rc == LP_OK) rc = mysql_read_lenenc_str(&r, &z, &nz, err);
        if (rc) return rc;
    }
    return LP_OK;
}

int mysql_parse_handshake_response(const uint8_t *p, size_t n, MysqlHandshakeResponse *res,
                                   LpError *err) {
    MysqlReader r;
    const uint8_t *pSkip;
    int rc;
    memset(res, 0, sizeof(*res));
    mysql_reader_init(&r, p, n);
    if ((rc = mysql_read_u32(&r, &res->caps, err))) return field_err(err, rc, "capabilities");
    if (!(res->caps & MYSQL_CLIENT_PROTOCOL_41)) {
        return lp_err_set(err, LP_CORRUPT, "handshake response: client lacks protocol 4.1");
    }
    if ((rc = mysql_read_u32(&r, &res->nMaxPacket, err))) return field_err(err, rc, "max packet");
    if ((rc = mysql_read_u8(&r, &res->charset, err))) return field_err(err, rc, "charset");
    /* The filler is not checked: MariaDB clients put their extended
    ** capabilities in its last 4 bytes when talking to MariaDB. */
    if ((rc = mysql_read_bytes(&r, 23, &pSkip, err))) return field_err(err, rc, "filler");
    /* An SSLRequest is the first 32 bytes of a response and nothing else. */
    if ((res->caps & MYSQL_CLIENT_SSL) && r.i == r.n) {
        return lp_err_set(err, LP_CORRUPT, "handshake response: SSL requested, not supported");
    }
    if ((rc = mysql_read_nulstr(&r, &res->zUser, &res->nUser, err))) {
        return field_err(err, rc, "user");
    }

    /* The layout follows the flags the client sent, which describe what
    ** it wrote; the server intersects them with its own for behaviour. */
    if (res->caps & MYSQL_CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA) {
        rc = mysql_read_lenenc_str(&r, &res->aAuth, &res->nAuth, err);
    } else if (res->caps & MYSQL_CLIENT_SECURE_CONNECTION) {
        uint8_t len = 0; /* set by mysql_read_u8 on success; gcc -O2 cannot see that */
        rc = mysql_read_u8(&r, &len, err);
        if (rc == LP_OK) {
            res->nAuth = len;
            rc = mysql_read_bytes(&r, len, &res->aAuth, err);
        }
    } else {
        const char *z = NULL;
        rc = mysql_read_nulstr(&r, &z, &res->nAuth, err);
        res->aAuth = (const uint8_t *)z;
    }
    if (rc) return field_err(err, rc, "auth response");

    /* Optional tail: each field is absent when the packet has ended. */
    if ((res->caps & MYSQL_CLIENT_CONNECT_WITH_DB) && r.i < r.n) {
        if ((rc = mysql_read_nulstr(&r, &res->zDb, &res->nDb, err))) {
            return field_err(err, rc, "database");
        }
    }
    if ((res->caps & MYSQL_CLIENT_PLUGIN_AUTH) && r.i < r.n) {
        if ((rc = mysql_read_nulstr(&r, &res->zPlugin, &res->nPlugin, err))) {
            return field_err(err, rc, "auth plugin");
        }
    }
    if ((res->caps & MYSQL_CLIENT_CONNECT_ATTRS) && r.i < r.n) {
        const uint8_t *pAttr;
        size_t nAttr;
        rc = mysql_read_lenenc_str(&r, &pAttr, &nAttr, err);
        if (rc == LP_OK) rc = check_attrs(pAttr, nAttr, err);
        if (rc) return field_err(err, rc, "connection attributes");
    }
    /* Bytes after the last field (newer clients' extensions that loupe
    ** did not advertise) are ignored, as MySQL does. */
    return LP_OK;
}

int mysql_parse_command(const uint8_t *p, size_t n, MysqlCommand *c, LpError *err) {
    memset(c, 0, sizeof(*c));
    if (n == 0) return lp_err_set(err, LP_CORRUPT, "empty command packet");
    c->cmd = p[0];
    c->pArg = p + 1;
    c->nArg = n - 1;
    MysqlReader r;
    mysql_reader_init(&r, c->pArg, c->nArg);
    int rc;
    switch (c->cmd) {
    case MYSQL_COM_FIELD_LIST:
        if ((rc = mysql_read_nulstr(&r, &c->zTable, &c->nTable, err))) {
            if (err) lp_err_prefix(err, "COM_FIELD_LIST table");
            return rc;
        }
        c->pWild = r.p + r.i;
        c->nWild = r.n - r.i;
        break;
    case MYSQL_COM_SET_OPTION:
        if (c->nArg != 2) {
            return lp_err_set(err, LP_CORRUPT, "COM_SET_OPTION: %zu argument bytes, expected 2",
                              c->nArg);
        }
        mysql_read_u16(&r, &c->option, err);
        break;
    default:
        break;
    }
    return LP_OK;
}

/* ------------------------------------------------- mysql_native_password */

/* SHA1 through EVP (the low-level SHA1_* calls are deprecated in OpenSSL
** 3). EVP_Digest allocates a context, so it can fail: LP_NOMEM. */
static int sha1(const void *p, size_t n, uint8_t *aOut) {
    unsigned int nOut = 0;
    return EVP_Digest(p, n, aOut, &nOut, EVP_sha1(), NULL) == 1 && nOut == 20 ? LP_OK
                                                                              : LP_NOMEM;
}

int mysql_scramble_new(uint8_t *a, LpError *err) {
    uint8_t aRand[MYSQL_SCRAMBLE_LEN];
    if (RAND_bytes(aRand, sizeof(aRand)) != 1) {
        return lp_err_set(err, LP_INTERNAL, "random source failed: cannot make a scramble");
    }
    /* Printable ASCII '!'..'~': some clients treat the data as a string. */
    for (int i = 0; i < MYSQL_SCRAMBLE_LEN; i++) a[i] = (uint8_t)(0x21 + aRand[i] % 94);
    return LP_OK;
}

int mysql_native_hash(const char *zPw, size_t nPw, uint8_t *aHash) {
    uint8_t s1[20];
    int rc = sha1(zPw, nPw, s1);
    if (rc == LP_OK) rc = sha1(s1, sizeof(s1), aHash);
    OPENSSL_cleanse(s1, sizeof(s1));
    return rc;
}

int mysql_native_token(const char *zPw, size_t nPw, const uint8_t *aScramble, uint8_t *aTok,
                       size_t *pnTok) {
    /* s1 = SHA1(pw); buf = scramble + SHA1(s1); token = s1 XOR SHA1(buf) */
    uint8_t s1[20], buf[MYSQL_SCRAMBLE_LEN + 20], x[20];
    *pnTok = 0;
    if (nPw == 0) return LP_OK;
    int rc = sha1(zPw, nPw, s1);
    memcpy(buf, aScramble, MYSQL_SCRAMBLE_LEN);
    if (rc == LP_OK) rc = sha1(s1, sizeof(s1), buf + MYSQL_SCRAMBLE_LEN);
    if (rc == LP_OK) rc = sha1(buf, sizeof(buf), x);
    if (rc == LP_OK) {
        for (int i = 0; i < 20; i++) aTok[i] = s1[i] ^ x[i];
        *pnTok = 20;
    }
    OPENSSL_cleanse(s1, sizeof(s1));
    return rc;
}

int mysql_native_verify(const uint8_t *aScramble, const uint8_t *aHash, const uint8_t *aTok,
                        size_t nTok) {
    uint8_t buf[MYSQL_SCRAMBLE_LEN + 20], x[20], cand[20], h[20];
    if (nTok != 20) return 0;
    /* tok XOR SHA1(scramble + stored) gives back SHA1(pw) when the client
    ** knew the password; its SHA1 must then equal the stored hash. */
    memcpy(buf, aScramble, MYSQL_SCRAMBLE_LEN);
    memcpy(buf + MYSQL_SCRAMBLE_LEN, aHash, 20);
    if (sha1(buf, sizeof(buf), x) != LP_OK) return 0;
    for (int i = 0; i < 20; i++) cand[i] = aTok[i] ^ x[i];
    int ok = sha1(cand, sizeof(cand), h) == LP_OK && CRYPTO_memcmp(h, aHash, 20) == 0;
    OPENSSL_cleanse(cand, sizeof(cand));
    return ok;
}
