/*
** packet.h — the MySQL client/server protocol codec: framing, field
** encodings, the packets loupe sends and the packets it parses, and the
** mysql_native_password check. No sockets here: everything works on byte
** buffers, so the codec is unit-tested and fuzzed on its own.
**
** Wire format (all integers little-endian).
**
**   packet      int<3> payload length | int<1> sequence id | payload
**               A payload of 0xFFFFFF bytes or more is cut into parts of
**               0xFFFFFF bytes; a part shorter than 0xFFFFFF (possibly
**               empty) ends the logical packet. Each part carries the next
**               sequence id.
**   int<lenenc> < 0xFB: 1 byte; 0xFC + int<2>; 0xFD + int<3>; 0xFE +
**               int<8>. 0xFB is NULL in a text row; 0xFF is never valid.
**   str<lenenc> int<lenenc> length, then that many bytes.
**   str<NUL>    bytes up to a 0x00 terminator.
**
** Contract.
**  - Readers (MysqlReader, mysql_parse_*) never read outside the buffer
**    they are given: a truncated or malformed field is LP_CORRUPT with a
**    message naming the field, never an out-of-bounds access. Parsed
**    strings and byte fields are BORROWED: they point into the caller's
**    payload and are valid as long as it is.
**  - Framing (mysql_frame_scan) decides from the 4-byte headers alone
**    whether a logical packet is complete, too large for the configured
**    maximum, or out of sequence, so an oversized payload is refused
**    before any of it has to be buffered.
**  - Builders (mysql_put_*) append one complete packet, headers included,
**    to a StrBuf, and advance the caller's sequence id by the number of
**    wire packets written. They never fail on their own: like every
**    StrBuf append, an allocation failure sets out->oom, which the caller
**    checks once after building a whole response.
**
** Thread safety: every function is reentrant; nothing here is shared.
*/
#ifndef LP_SERVER_MYSQL_PACKET_H
#define LP_SERVER_MYSQL_PACKET_H

#include <stddef.h>
#include <stdint.h>

#include "sql/result.h"
#include "util/error.h"
#include "util/strbuf.h"

/* ------------------------------------------------------------ constants */

#define MYSQL_HEADER_LEN 4
#define MYSQL_MAX_PART 0xFFFFFFu    /* largest payload of one wire packet */
#define MYSQL_SCRAMBLE_LEN 20       /* auth-plugin-data of mysql_native_password */
#define MYSQL_NATIVE_PLUGIN "mysql_native_password"

/* Capability flags. */
#define MYSQL_CLIENT_LONG_PASSWORD                  0x00000001u
#define MYSQL_CLIENT_FOUND_ROWS                     0x00000002u
#define MYSQL_CLIENT_LONG_FLAG                      0x00000004u
#define MYSQL_CLIENT_CONNECT_WITH_DB                0x00000008u
#define MYSQL_CLIENT_COMPRESS                       0x00000020u
#define MYSQL_CLIENT_PROTOCOL_41                    0x00000200u
#define MYSQL_CLIENT_SSL                            0x00000800u
#define MYSQL_CLIENT_TRANSACTIONS                   0x00002000u
#define MYSQL_CLIENT_SECURE_CONNECTION              0x00008000u
#define MYSQL_CLIENT_MULTI_STATEMENTS               0x00010000u
#define MYSQL_CLIENT_MULTI_RESULTS                  0x00020000u
#define MYSQL_CLIENT_PS_MULTI_RESULTS               0x00040000u
#define MYSQL_CLIENT_PLUGIN_AUTH                    0x00080000u
#define MYSQL_CLIENT_CONNECT_ATTRS                  0x00100000u
#define MYSQL_CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA 0x00200000u
#define MYSQL_CLIENT_DEPRECATE_EOF                  0x01000000u

/* What loupe advertises. Not SSL, COMPRESS, MULTI_STATEMENTS, and not
** DEPRECATE_EOF: every client then takes the one classic path (column
** definitions and rows each closed by an EOF packet). */
#define MYSQL_SERVER_CAPS                                                         \
    (MYSQL_CLIENT_LONG_PASSWORD | MYSQL_CLIENT_FOUND_ROWS | MYSQL_CLIENT_LONG_FLAG | \
     MYSQL_CLIENT_CONNECT_WITH_DB | MYSQL_CLIENT_PROTOCOL_41 |                        \
     MYSQL_CLIENT_TRANSACTIONS | MYSQL_CLIENT_SECURE_CONNECTION |                     \
     MYSQL_CLIENT_PLUGIN_AUTH | MYSQL_CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA |         \
     MYSQL_CLIENT_CONNECT_ATTRS | MYSQL_CLIENT_MULTI_RESULTS |                        \
     MYSQL_CLIENT_PS_MULTI_RESULTS)

/* Commands (first payload byte of a command packet). */
enum {
    MYSQL_COM_QUIT = 0x01,
    MYSQL_COM_INIT_DB = 0x02,
    MYSQL_COM_QUERY = 0x03,
    MYSQL_COM_FIELD_LIST = 0x04,
    MYSQL_COM_STATISTICS = 0x09,
    MYSQL_COM_PING = 0x0e,
    MYSQL_COM_SET_OPTION = 0x1b,
    MYSQL_COM_RESET_CONNECTION = 0x1f,
};

/* COM_SET_OPTION values. */
#define MYSQL_OPTION_MULTI_STATEMENTS_ON 0
#define MYSQL_OPTION_MULTI_STATEMENTS_OFF 1

/* Column types (enum_field_types) loupe sends. */
enum {
    MYSQL_TYPE_TINY = 1,
    MYSQL_TYPE_LONG = 3,
    MYSQL_TYPE_FLOAT = 4,
    MYSQL_TYPE_DOUBLE = 5,
    MYSQL_TYPE_LONGLONG = 8,
    MYSQL_TYPE_VAR_STRING = 253,
};

/* Column definition flags. */
#define MYSQL_NOT_NULL_FLAG 0x0001
#define MYSQL_PRI_KEY_FLAG 0x0002
#define MYSQL_UNSIGNED_FLAG 0x0020
#define MYSQL_BINARY_FLAG 0x0080
#define MYSQL_NUM_FLAG 0x8000

#define MYSQL_CHARSET_UTF8MB4 45    /* utf8mb4_general_ci */
#define MYSQL_CHARSET_BINARY 63

/* ------------------------------------------------------------- framing */

/* One logical packet found at the start of a buffer. */
typedef struct MysqlFrame {
    size_t nWire;       /* bytes it occupies in the buffer, headers included */
    size_t nPayload;    /* payload bytes (all parts together) */
    int nPart;          /* wire packets it was cut into (>= 1) */
    uint8_t seqNext;    /* sequence id after its last part: the reply's first */
} MysqlFrame;

/* Scans the n bytes at a for one logical packet whose first part must
** carry sequence id seq, with at most nMax payload bytes in all.
**   LP_OK       *pbDone = 1 and *f filled when the packet is complete,
**               *pbDone = 0 when more bytes are needed;
**   LP_LIMIT    the headers seen so far declare more than nMax bytes
**               (f->nPayload says how many; the message is "packet of N
**               bytes exceeds max_allowed_packet (M)");
**   LP_CORRUPT  a part carries the wrong sequence id (f->seqNext is the
**               sequence id the offending part carried, plus one).
** Only headers are read, never payload bytes. */
int mysql_frame_scan(const uint8_t *a, size_t n, uint8_t seq, size_t nMax, MysqlFrame *f,
                     int *pbDone, LpError *err);

/* Makes the payload of the complete frame f at a contiguous by moving the
** later parts down over the inner headers, in place. Returns a pointer to
** the f->nPayload payload bytes (a + 4). */
uint8_t *mysql_frame_join(uint8_t *a, const MysqlFrame *f);

/* ------------------------------------------------------------- reading */

/* A bounded cursor over a payload. */
typedef struct MysqlReader {
    const uint8_t *p;   /* payload (borrowed) */
    size_t n;           /* its length */
    size_t i;           /* read position, <= n */
} MysqlReader;

void mysql_reader_init(MysqlReader *r, const void *p, size_t n);
/* Fixed-width integers. LP_CORRUPT when fewer bytes remain. */
int mysql_read_u8(MysqlReader *r, uint8_t *pv, LpError *err);
int mysql_read_u16(MysqlReader *r, uint16_t *pv, LpError *err);
int mysql_read_u32(MysqlReader *r, uint32_t *pv, LpError *err);
/* int<lenenc>. 0xFB (NULL) and 0xFF are LP_CORRUPT here: they are not
** integers. */
int mysql_read_lenenc(MysqlReader *r, uint64_t *pv, LpError *err);
/* str<lenenc>: *pz points at the *pn bytes inside the payload. */
int mysql_read_lenenc_str(MysqlReader *r, const uint8_t **pz, size_t *pn, LpError *err);
/* str<NUL>: *pz points at the string inside the payload (it is
** NUL-terminated there), *pn is its length without the NUL. LP_CORRUPT
** when no NUL follows. */
int mysql_read_nulstr(MysqlReader *r, const char **pz, size_t *pn, LpError *err);
/* n raw bytes. */
int mysql_read_bytes(MysqlReader *r, size_t n, const uint8_t **pp, LpError *err);

/* ------------------------------------------------------------- writing */

/* Raw field appends (no header). */
void mysql_put_u8(StrBuf *out, uint8_t v);
void mysql_put_u16(StrBuf *out, uint16_t v);
void mysql_put_u24(StrBuf *out, uint32_t v);
void mysql_put_u32(StrBuf *out, uint32_t v);
void mysql_put_u64(StrBuf *out, uint64_t v);
void mysql_put_lenenc(StrBuf *out, uint64_t v);
void mysql_put_lenenc_str(StrBuf *out, const void *p, size_t n);

/* Starts a packet: appends a placeholder header, returns its offset. */
size_t mysql_packet_begin(StrBuf *out);
/* Ends the packet begun at off: fills in its header, cutting a payload of
** 0xFFFFFF bytes or more into parts (inserting the extra headers), and
** advances *pSeq once per part. */
void mysql_packet_end(StrBuf *out, size_t off, uint8_t *pSeq);

/* Initial handshake, protocol version 10. */
typedef struct MysqlHandshake {
    const char *zVersion;       /* server version string */
    uint32_t connId;            /* connection id */
    const uint8_t *aScramble;   /* MYSQL_SCRAMBLE_LEN bytes, none of them 0 */
    uint32_t caps;              /* capability flags */
    uint8_t charset;            /* default collation id */
    uint16_t status;            /* server status flags */
    const char *zPlugin;        /* default auth plugin name */
} MysqlHandshake;
void mysql_put_handshake(StrBuf *out, uint8_t *pSeq, const MysqlHandshake *h);

/* OK packet (header 0x00): affected rows, last insert id, status,
** warnings, optional info text (NULL for none). */
void mysql_put_ok(StrBuf *out, uint8_t *pSeq, uint64_t nAffected, uint64_t iLastId,
                  uint16_t status, uint16_t nWarn, const char *zInfo);
/* ERR packet: 0xFF, errno, '#', five-character SQLSTATE (NULL means
** "HY000"), message. */
void mysql_put_err(StrBuf *out, uint8_t *pSeq, uint16_t iErrno, const char *zSqlState,
                   const char *zMsg);
/* EOF packet: 0xFE, warnings, status. */
void mysql_put_eof(StrBuf *out, uint8_t *pSeq, uint16_t nWarn, uint16_t status);

/* ColumnDefinition41. */
typedef struct MysqlColumnDef {
    const char *zSchema;    /* database name, or "" */
    const char *zTable;     /* table as named in the query, or "" */
    const char *zOrgTable;  /* physical table, or "" */
    const char *zName;      /* column name as shown */
    const char *zOrgName;   /* physical column name */
    uint16_t charset;       /* 45 for text, 63 (binary) for numbers */
    uint32_t length;        /* maximum display length */
    uint8_t type;           /* MYSQL_TYPE_* */
    uint16_t flags;         /* MYSQL_*_FLAG */
    uint8_t decimals;       /* 31 for FLOAT/DOUBLE, 0 for integers and text */
} MysqlColumnDef;
/* bFieldList adds the trailing default-value field (sent as NULL) that
** a COM_FIELD_LIST response carries. */
void mysql_put_column_def(StrBuf *out, uint8_t *pSeq, const MysqlColumnDef *d, int bFieldList);
/* Fills d for the SQL result column c (names borrowed from c). */
void mysql_column_from_sql(const SqlColumn *c, MysqlColumnDef *d);
/* A text result row: one str<lenenc> per cell, 0xFB for a NULL cell. */
void mysql_put_row(StrBuf *out, uint8_t *pSeq, const SqlCell *aCell, int nCell);
/* AuthSwitchRequest: 0xFE, plugin name, plugin data + NUL. */
void mysql_put_auth_switch(StrBuf *out, uint8_t *pSeq, const char *zPlugin,
                           const uint8_t *aData, size_t nData);

/* ------------------------------------------------------------- parsing */

/* HandshakeResponse41 (the client's reply to the initial handshake). */
typedef struct MysqlHandshakeResponse {
    uint32_t caps;          /* client capability flags */
    uint32_t nMaxPacket;    /* client's max packet size */
    uint8_t charset;        /* client collation id */
    const char *zUser;      /* NUL-terminated inside the payload */
    size_t nUser;
    const uint8_t *aAuth;   /* auth response bytes (may be empty) */
    size_t nAuth;
    const char *zDb;        /* NUL-terminated, or NULL when not sent */
    size_t nDb;
    const char *zPlugin;    /* NUL-terminated, or NULL when not sent */
    size_t nPlugin;
} MysqlHandshakeResponse;

/* Parses a HandshakeResponse41 payload. LP_CORRUPT (message says which
** field) when it is truncated or malformed, when the client lacks
** CLIENT_PROTOCOL_41, or when it is an SSLRequest (loupe has no TLS).
** A field the flags announce but the packet ends before is absent, as
** clients that never send it expect; a field that starts but is cut
** short is an error. Connection attributes are bounds-checked and
** skipped. */
int mysql_parse_handshake_response(const uint8_t *p, size_t n, MysqlHandshakeResponse *r,
                                   LpError *err);

/* A command packet. */
typedef struct MysqlCommand {
    uint8_t cmd;            /* MYSQL_COM_* (or any other byte) */
    const uint8_t *pArg;    /* the bytes after the command byte */
    size_t nArg;
    /* COM_FIELD_LIST */
    const char *zTable;     /* NUL-terminated inside the payload */
    size_t nTable;
    const uint8_t *pWild;   /* wildcard (rest of the packet) */
    size_t nWild;
    /* COM_SET_OPTION */
    uint16_t option;
} MysqlCommand;

/* Parses a command payload. LP_CORRUPT when empty, or when a
** COM_FIELD_LIST or COM_SET_OPTION packet is malformed. Unknown commands
** parse fine (cmd and the argument bytes); rejecting them is the server's
** business. */
int mysql_parse_command(const uint8_t *p, size_t n, MysqlCommand *c, LpError *err);

/* ------------------------------------------------- mysql_native_password */

/* Fills a with MYSQL_SCRAMBLE_LEN random printable bytes (never 0, which
** clients would take for a terminator). LP_INTERNAL when the system's
** random source fails. */
int mysql_scramble_new(uint8_t *a, LpError *err);
/* The stored form of a password: SHA1(SHA1(password)), 20 bytes.
** LP_NOMEM when libcrypto cannot allocate its digest context. */
int mysql_native_hash(const char *zPw, size_t nPw, uint8_t *aHash);
/* The client's token: SHA1(pw) XOR SHA1(scramble + SHA1(SHA1(pw))); an
** empty password gives an empty token (*pnTok = 0, else 20). LP_NOMEM as
** above. (The server never needs it; tests and tools play the client.) */
int mysql_native_token(const char *zPw, size_t nPw, const uint8_t *aScramble, uint8_t *aTok,
                       size_t *pnTok);
/* 1 when token aTok (nTok bytes) proves knowledge of the password whose
** stored hash is aHash, for this scramble; 0 otherwise. Constant time in
** the token contents. */
int mysql_native_verify(const uint8_t *aScramble, const uint8_t *aHash, const uint8_t *aTok,
                        size_t nTok);

#endif /* LP_SERVER_MYSQL_PACKET_H */
