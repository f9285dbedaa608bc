/*
** hashmap.h — two open-addressing hash maps: IdMap (uint64 -> uint64) and
** HashMap (byte string -> pointer).
**
** Contract. Both maps use linear probing over a power-of-two slot array,
** hash with XXH3 (Debian's libxxhash), keep the load factor at or below 3/4
** by doubling and rehashing, and delete by backward shift: the entries after
** the hole that may move closer to their home slot do, so no tombstones
** accumulate and a lookup still stops at the first empty slot.
**
**   IdMap    maps any uint64 key (document id) to a uint64 value (row
**            number, ordinal). Key 0 is legal: it is kept beside the slot
**            array, because 0 marks an empty slot inside it. Lookups are on
**            the hot path of point queries; slots are 16 bytes, key and value
**            side by side.
**   HashMap  maps a byte string (pointer + length, any bytes, empty allowed)
**            to a non-NULL void *. Keys are BORROWED: the map stores the
**            pointer, not a copy, so the caller keeps the bytes alive and
**            unchanged while the entry exists, typically inside the value
**            (a Table holds its own name). Putting an existing key replaces
**            both the value and the stored key pointer, so the old value
**            (which may own the old key) can then be freed. Values are
**            owned by the caller; the map never frees them.
**
** A zero-initialised map is empty and valid (the *_init functions do the
** same); the slot array is allocated on the first put. Only puts that grow
** the map can fail, with LP_NOMEM, leaving the map unchanged.
**
** Iteration visits every entry once, in no particular order. The map must
** not be modified while it is iterated (a put may rehash, a delete shifts
** entries across the cursor).
**
** Hashing is unseeded, so an attacker who controls many keys could aim them
** at one probe run; the maps are for ids and names the server itself
** admits, where that costs time, never correctness.
**
** Thread safety: none. Concurrent readers are safe only while nobody writes.
*/
#ifndef LP_UTIL_HASHMAP_H
#define LP_UTIL_HASHMAP_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

/* ---------------------------------------------------------------- IdMap */

typedef struct IdMapSlot {
    uint64_t key;           /* 0 = empty slot (key 0 lives in IdMap.zeroVal) */
    uint64_t val;           /* value stored for key */
} IdMapSlot;

typedef struct IdMap {
    IdMapSlot *aSlot;       /* nSlot slots, or NULL before the first put */
    size_t nSlot;           /* a power of two, or 0 */
    size_t nUsed;           /* entries in aSlot (key 0 not counted) */
    int bZero;              /* key 0 is present */
    uint64_t zeroVal;       /* its value when bZero */
} IdMap;

/* Iteration cursor: zero-initialise (`IdMapIter it = {0};`) to start. */
typedef struct IdMapIter {
    size_t i;               /* next position: 0 is key 0, p > 0 is slot p-1 */
} IdMapIter;

void idmap_init(IdMap *m);
/* Releases the slots; the map is empty and valid afterwards. */
void idmap_free(IdMap *m);
/* Makes room for n entries in total without further growth.
** LP_OK or LP_NOMEM (map unchanged). */
int idmap_reserve(IdMap *m, size_t n);
/* 1 and *pVal (when pVal is non-NULL) = the value if key is present, else 0. */
int idmap_get(const IdMap *m, uint64_t key, uint64_t *pVal);
/* Inserts key -> val or overwrites key's value. LP_OK or LP_NOMEM (map
** unchanged). */
int idmap_put(IdMap *m, uint64_t key, uint64_t val);
/* Removes key. Returns 1 and *pOld (when non-NULL) = its value if it was
** present, else 0. Never fails, never shrinks the slot array. */
int idmap_del(IdMap *m, uint64_t key, uint64_t *pOld);
/* Number of entries. */
size_t idmap_count(const IdMap *m);
/* Advances the cursor: 1 with *pKey, *pVal set (either may be NULL), or 0
** when every entry has been visited. */
int idmap_next(const IdMap *m, IdMapIter *it, uint64_t *pKey, uint64_t *pVal);

/* -------------------------------------------------------------- HashMap */

typedef struct HMapSlot {
    const void *pKey;       /* borrowed key bytes; NULL = empty slot */
    size_t nKey;            /* key length in bytes */
    uint64_t h;             /* XXH3 of the key, kept for growth and compares */
    void *pVal;             /* caller's value, never NULL in a used slot */
} HMapSlot;

typedef struct HashMap {
    HMapSlot *aSlot;        /* nSlot slots, or NULL before the first put */
    size_t nSlot;           /* a power of two, or 0 */
    size_t nUsed;           /* entries */
} HashMap;

/* Iteration cursor: zero-initialise to start. */
typedef struct HMapIter {
    size_t i;               /* next slot to look at */
} HMapIter;

void hmap_init(HashMap *m);
/* Releases the slots (not the keys or values); the map is empty and valid
** afterwards. */
void hmap_free(HashMap *m);
/* The value stored under the nKey bytes at pKey, or NULL. pKey may be NULL
** when nKey is 0. */
void *hmap_get(const HashMap *m, const void *pKey, size_t nKey);
/* Inserts pKey -> pVal, or replaces the value and the key pointer of an
** equal key; *ppOld (when non-NULL) receives the replaced value or NULL.
** pVal must not be NULL. LP_OK or LP_NOMEM (map unchanged, *ppOld NULL). */
int hmap_put(HashMap *m, const void *pKey, size_t nKey, void *pVal, void **ppOld);
/* Removes the key; returns its value (now the caller's alone) or NULL when
** absent. Never fails, never shrinks the slot array. */
void *hmap_del(HashMap *m, const void *pKey, size_t nKey);
/* Number of entries. */
size_t hmap_count(const HashMap *m);
/* Advances the cursor: 1 with the entry's key and value (any out-pointer may
** be NULL), or 0 when every entry has been visited. */
int hmap_next(const HashMap *m, HMapIter *it, const void **ppKey, size_t *pnKey, void **ppVal);

#endif /* LP_UTIL_HASHMAP_H */
