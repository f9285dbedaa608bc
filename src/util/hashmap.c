/*
** hashmap.c — see hashmap.h.
**
** Both maps share one scheme. Slot i of an n-slot array (n a power of two)
** is looked at by the keys whose home (hash & (n-1)) lies at or before i in
** the same probe run. Invariants:
**   (1) Every entry sits in its home slot or after it, with no empty slot
**       between home and entry (so a lookup may stop at the first empty slot).
**   (2) nUsed + 1 <= n * 3/4 before every insert into the array, so at least
**       a quarter of the slots are empty and every probe terminates.
** Deletion keeps (1) by backward shift: walking the run after the hole, an
** entry whose home is not strictly between the hole and its own slot moves
** into the hole, which then moves to where that entry was.
**
** XXH_INLINE_ALL compiles XXH3 into this file, so hashing an 8-byte id is a
** few inlined instructions rather than a call into libxxhash.
*/
#include "util/hashmap.h"

#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "util/bytes.h"

#define HM_MIN_SLOTS 16

/* Smallest power-of-two slot count >= HM_MIN_SLOTS holding n entries under
** the 3/4 load factor (n + 1 <= slots * 3/4 leaves room for one more
** insert), or 0 when that would overflow. */
static size_t hm_slots_for(size_t n, size_t szSlot) {
    if (n > SIZE_MAX / 2 / szSlot) return 0;
    size_t nSlot = HM_MIN_SLOTS;
    while (nSlot / 4 * 3 < n + 1) {
        if (nSlot > SIZE_MAX / 2 / szSlot) return 0;
        nSlot *= 2;
    }
    return nSlot;
}

/* ---------------------------------------------------------------- IdMap */

static inline uint64_t id_hash(uint64_t key) {
    return XXH3_64bits(&key, sizeof(key));
}

void idmap_init(IdMap *m) {
    memset(m, 0, sizeof(*m));
}

void idmap_free(IdMap *m) {
    free(m->aSlot);
    idmap_init(m);
}

/* Moves every entry into a fresh array of nSlot slots. */
static int idmap_rehash(IdMap *m, size_t nSlot) {
    IdMapSlot *aNew = calloc(nSlot, sizeof(IdMapSlot));
    if (!aNew) return LP_NOMEM;
    size_t mask = nSlot - 1;
    for (size_t i = 0; i < m->nSlot; i++) {
        IdMapSlot s = m->aSlot[i];
        if (s.key == 0) continue;
        size_t j = id_hash(s.key) & mask;
        while (aNew[j].key != 0) j = (j + 1) & mask;
        aNew[j] = s;
    }
    free(m->aSlot);
    m->aSlot = aNew;
    m->nSlot = nSlot;
    return LP_OK;
}

int idmap_reserve(IdMap *m, size_t n) {
    size_t nSlot = hm_slots_for(n, sizeof(IdMapSlot));
    if (nSlot == 0) return LP_NOMEM;
    if (nSlot <= m->nSlot) return LP_OK;
    return idmap_rehash(m, nSlot);
}

/* The slot holding key (non-zero), or the empty slot ending its probe run.
** The array must exist. */
static inline size_t idmap_find(const IdMap *m, uint64_t key) {
    size_t mask = m->nSlot - 1;
    size_t i = id_hash(key) & mask;
    while (m->aSlot[i].key != key && m->aSlot[i].key != 0) i = (i + 1) & mask;
    return i;
}

int idmap_get(const IdMap *m, uint64_t key, uint64_t *pVal) {
    if (key == 0) {
        if (m->bZero && pVal) *pVal = m->zeroVal;
        return m->bZero;
    }
    if (m->nUsed == 0) return 0;
    const IdMapSlot *s = &m->aSlot[idmap_find(m, key)];
    if (s->key == 0) return 0;
    if (pVal) *pVal = s->val;
    return 1;
}

int idmap_put(IdMap *m, uint64_t key, uint64_t val) {
    if (key == 0) {
        m->bZero = 1;
        m->zeroVal = val;
        return LP_OK;
    }
    size_t i = 0;
    if (m->nSlot) {
        i = idmap_find(m, key);
        if (m->aSlot[i].key == key) {
            m->aSlot[i].val = val;
            return LP_OK;
        }
    }
    /* A new key: grow first if this insert would pass the load factor
    ** (invariant 2), then find its empty slot in the new array. */
    if (m->nSlot / 4 * 3 < m->nUsed + 1) {
        size_t nSlot = hm_slots_for(m->nUsed + 1, sizeof(IdMapSlot));
        if (nSlot == 0 || idmap_rehash(m, nSlot) != LP_OK) return LP_NOMEM;
        i = idmap_find(m, key);
    }
    m->aSlot[i].key = key;
    m->aSlot[i].val = val;
    m->nUsed++;
    return LP_OK;
}

int idmap_del(IdMap *m, uint64_t key, uint64_t *pOld) {
    if (key == 0) {
        if (!m->bZero) return 0;
        if (pOld) *pOld = m->zeroVal;
        m->bZero = 0;
        return 1;
    }
    if (m->nUsed == 0) return 0;
    size_t hole = idmap_find(m, key);
    if (m->aSlot[hole].key == 0) return 0;
    if (pOld) *pOld = m->aSlot[hole].val;
    size_t mask = m->nSlot - 1;
    for (size_t j = (hole + 1) & mask; m->aSlot[j].key != 0; j = (j + 1) & mask) {
        size_t home = id_hash(m->aSlot[j].key) & mask;
        /* The entry may fill the hole when the hole lies on its probe path,
        ** i.e. it is at least as far from home as from the hole. */
        if (((j - home) & mask) >= ((j - hole) & mask)) {
            m->aSlot[hole] = m->aSlot[j];
            hole = j;
        }
    }
    m->aSlot[hole].key = 0;
    m->nUsed--;
    return 1;
}

size_t idmap_count(const IdMap *m) {
    return m->nUsed + (m->bZero ? 1 : 0);
}

int idmap_next(const IdMap *m, IdMapIter *it, uint64_t *pKey, uint64_t *pVal) {
    if (it->i == 0) {
        it->i = 1;
        if (m->bZero) {
            if (pKey) *pKey = 0;
            if (pVal) *pVal = m->zeroVal;
            return 1;
        }
    }
    while (it->i <= m->nSlot) {
        const IdMapSlot *s = &m->aSlot[it->i - 1];
        it->i++;
        if (s->key != 0) {
            if (pKey) *pKey = s->key;
            if (pVal) *pVal = s->val;
            return 1;
        }
    }
    return 0;
}

/* -------------------------------------------------------------- HashMap */

/* Stands in for a NULL pointer given with length 0, so that a used slot
** always has a non-NULL pKey. */
static const char hm_empty_key[1] = "";

void hmap_init(HashMap *m) {
    memset(m, 0, sizeof(*m));
}

void hmap_free(HashMap *m) {
    free(m->aSlot);
    hmap_init(m);
}

static int hmap_rehash(HashMap *m, size_t nSlot) {
    HMapSlot *aNew = calloc(nSlot, sizeof(HMapSlot));
    if (!aNew) return LP_NOMEM;
    size_t mask = nSlot - 1;
    for (size_t i = 0; i < m->nSlot; i++) {
        const HMapSlot *s = &m->aSlot[i];
        if (!s->pKey) continue;
        size_t j = s->h & mask;
        while (aNew[j].pKey) j = (j + 1) & mask;
        aNew[j] = *s;
    }
    free(m->aSlot);
    m->aSlot = aNew;
    m->nSlot = nSlot;
    return LP_OK;
}

/* The slot holding the key, or the empty slot ending its probe run. */
static size_t hmap_find(const HashMap *m, const void *pKey, size_t nKey, uint64_t h) {
    size_t mask = m->nSlot - 1;
    size_t i = h & mask;
    for (;;) {
        const HMapSlot *s = &m->aSlot[i];
        if (!s->pKey) return i;
        /* nKey may be 0 with a NULL pKey: lp_bytes_eq reads nothing then. */
        if (s->h == h && s->nKey == nKey && lp_bytes_eq(s->pKey, pKey, nKey)) {
            return i;
        }
        i = (i + 1) & mask;
    }
}

void *hmap_get(const HashMap *m, const void *pKey, size_t nKey) {
    if (m->nUsed == 0) return NULL;
    if (!pKey) pKey = hm_empty_key;
    return m->aSlot[hmap_find(m, pKey, nKey, XXH3_64bits(pKey, nKey))].pVal;
}

int hmap_put(HashMap *m, const void *pKey, size_t nKey, void *pVal, void **ppOld) {
    if (ppOld) *ppOld = NULL;
    if (!pKey) pKey = hm_empty_key;
    uint64_t h = XXH3_64bits(pKey, nKey);
    size_t i = 0;
    if (m->nSlot) {
        i = hmap_find(m, pKey, nKey, h);
        HMapSlot *s = &m->aSlot[i];
        if (s->pKey) {
            /* Replace the key pointer too: the old one may die with the
            ** old value. */
            if (ppOld) *ppOld = s->pVal;
            s->pKey = pKey;
            s->pVal = pVal;
            return LP_OK;
        }
    }
    if (m->nSlot / 4 * 3 < m->nUsed + 1) {
        size_t nSlot = hm_slots_for(m->nUsed + 1, sizeof(HMapSlot));
        if (nSlot == 0 || hmap_rehash(m, nSlot) != LP_OK) return LP_NOMEM;
        i = hmap_find(m, pKey, nKey, h);
    }
    HMapSlot *s = &m->aSlot[i];
    s->pKey = pKey;
    s->nKey = nKey;
    s->h = h;
    s->pVal = pVal;
    m->nUsed++;
    return LP_OK;
}

void *hmap_del(HashMap *m, const void *pKey, size_t nKey) {
    if (m->nUsed == 0) return NULL;
    if (!pKey) pKey = hm_empty_key;
    size_t hole = hmap_find(m, pKey, nKey, XXH3_64bits(pKey, nKey));
    if (!m->aSlot[hole].pKey) return NULL;
    void *pOld = m->aSlot[hole].pVal;
    size_t mask = m->nSlot - 1;
    for (size_t j = (hole + 1) & mask; m->aSlot[j].pKey; j = (j + 1) & mask) {
        size_t home = m->aSlot[j].h & mask;
        if (((j - home) & mask) >= ((j - hole) & mask)) {
            m->aSlot[hole] = m->aSlot[j];
            hole = j;
        }
    }
    memset(&m->aSlot[hole], 0, sizeof(HMapSlot));
    m->nUsed--;
    return pOld;
}

size_t hmap_count(const HashMap *m) {
    return m->nUsed;
}

int hmap_next(const HashMap *m, HMapIter *it, const void **ppKey, size_t *pnKey, void **ppVal) {
    while (it->i < m->nSlot) {
        const HMapSlot *s = &m->aSlot[it->i++];
        if (s->pKey) {
            if (ppKey) *ppKey = s->pKey;
            if (pnKey) *pnKey = s->nKey;
            if (ppVal) *ppVal = s->pVal;
            return 1;
        }
    }
    return 0;
}
