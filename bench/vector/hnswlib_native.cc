/*
** hnswlib_native.cc — the vector benchmark's driver for hnswlib (Debian's
** libhnswlib-dev, header-only), compiled by run.py with -O3 -march=native
** so its AVX-512/AVX distance functions are the ones in use, as the issue
** asks ("hnswlib compiled for this CPU").
**
** Protocol and measurements: driver.h. Build: HierarchicalNSW with
** max_elements = every base row, M, ef_construction and the seed, then
** addPoint(row, label = row) from T std::threads taking rows from a shared
** atomic counter (hnswlib's addPoint locks per node; its Python binding's
** ParallelFor does the same). Cosine: rows and queries normalised here,
** InnerProductSpace (1 - dot). Search: setEf(ef), searchKnn(q, k).
**
** index_bytes is computed from hnswlib's layout, everything it allocates
** for the index: the level-0 block (max_elements x (links + vector +
** label)), each upper-level link block (malloc'd per node: levels x
** size_links_per_element + 1), the per-node pointer and level arrays, the
** per-node and update mutexes, and the label hash map (a node per label,
** estimated at 32 bytes with malloc's header, plus its bucket array). The
** visited-list pool (search scratch) is left out, as loupe's scratch is.
*/
#include <atomic>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <hnswlib/hnswlib.h>

#include "driver.h"

namespace {

struct NativeEng {
    hnswlib::SpaceInterface<float> *space = nullptr;
    hnswlib::HierarchicalNSW<float> *index = nullptr;
};

void normalize(float *v, uint32_t dims) {
    double s = 0;
    for (uint32_t j = 0; j < dims; j++) s += (double)v[j] * v[j];
    if (s > 0) {
        float inv = (float)(1.0 / std::sqrt(s));
        for (uint32_t j = 0; j < dims; j++) v[j] *= inv;
    }
}

void native_drop(void *pEng) {
    NativeEng *e = (NativeEng *)pEng;
    delete e->index;
    e->index = nullptr;
}

size_t layout_bytes(const hnswlib::HierarchicalNSW<float> *h) {
    size_t n = h->cur_element_count, bytes = h->max_elements_ * h->size_data_per_element_;
    for (size_t i = 0; i < n; i++) {
        if (h->element_levels_[i] > 0) bytes += h->size_links_per_element_ * h->element_levels_[i] + 1;
    }
    bytes += h->max_elements_ * (sizeof(char *) + sizeof(int));
    bytes += (h->link_list_locks_.size() + h->link_list_update_locks_.size()) * sizeof(std::mutex);
    bytes += h->label_lookup_.size() * 32 + h->label_lookup_.bucket_count() * sizeof(void *);
    return bytes;
}

int native_build(void *pEng, const DriverData *d, int nThread, size_t *pnByte, char *zErr, size_t nErr) {
    NativeEng *e = (NativeEng *)pEng;
    if (nThread < 1 || nThread > 64) {
        snprintf(zErr, nErr, "threads must be 1..64");
        return -1;
    }
    try {
        e->index = new hnswlib::HierarchicalNSW<float>(e->space, d->n, (size_t)d->M, (size_t)d->efConstruction,
                                                        (size_t)d->seed);
        std::atomic<uint32_t> next(0);
        std::atomic<bool> failed(false);
        std::string what;
        std::mutex whatMutex;
        auto worker = [&]() {
            for (;;) {
                uint32_t row = next.fetch_add(1);
                if (row >= d->n || failed.load()) break;
                try {
                    e->index->addPoint(d->aBase + (size_t)row * d->dims, (hnswlib::labeltype)row);
                } catch (const std::exception &ex) {
                    std::lock_guard<std::mutex> g(whatMutex);
                    if (!failed.exchange(true)) what = ex.what();
                    break;
                }
            }
        };
        std::vector<std::thread> threads;
        for (int i = 0; i < nThread; i++) threads.emplace_back(worker);
        for (auto &t : threads) t.join();
        if (failed.load()) {
            snprintf(zErr, nErr, "addPoint: %s", what.c_str());
            return -1;
        }
    } catch (const std::exception &ex) {
        snprintf(zErr, nErr, "hnswlib: %s", ex.what());
        return -1;
    }
    *pnByte = layout_bytes(e->index);
    return 0;
}

int native_search(void *pEng, const float *q, int k, int ef, int32_t *aRow, char *zErr, size_t nErr) {
    NativeEng *e = (NativeEng *)pEng;
    try {
        e->index->setEf((size_t)ef);
        auto res = e->index->searchKnn(q, (size_t)k);
        /* A max-heap: farthest on top, so fill from the back. */
        int n = (int)res.size();
        for (int i = n - 1; i >= 0; i--) {
            aRow[i] = (int32_t)res.top().second;
            res.pop();
        }
        return n;
    } catch (const std::exception &ex) {
        snprintf(zErr, nErr, "searchKnn: %s", ex.what());
        return -1;
    }
}

}  // namespace

int main(int argc, char **argv) {
    NativeEng eng;
    DriverData d;
    DriverOps ops = {native_drop, native_build, native_search, nullptr};
    char zVersion[96];
    if (drv_load(argc, argv, &d) != 0) return 2;
    if (d.cosine) {
        /* Queries are normalised once here, outside the timed loop, as
        ** loupe's are inside it (so loupe pays for it and hnswlib not). */
        for (uint32_t i = 0; i < d.n; i++) normalize(d.aBase + (size_t)i * d.dims, d.dims);
        for (uint32_t i = 0; i < d.nq; i++) normalize(d.aQuery + (size_t)i * d.dims, d.dims);
        eng.space = new hnswlib::InnerProductSpace(d.dims);
    } else {
        eng.space = new hnswlib::L2Space(d.dims);
    }
    snprintf(zVersion, sizeof zVersion, "hnswlib (header-only), -O3 -march=native%s",
#if defined(__AVX512F__)
             ", AVX-512"
#elif defined(__AVX__)
             ", AVX"
#else
             ", SSE"
#endif
    );
    int rc = drv_main(&eng, &ops, &d, zVersion);
    native_drop(&eng);
    delete eng.space;
    free(d.aBase);
    free(d.aQuery);
    return rc;
}
