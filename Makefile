# loupe — top-level entry points. CMake does the building underneath.
#
#   make            build everything into build/ (server: build/loupe)
#   make run        build, then start the server on its defaults
#   make test       build + ASan/UBSan build, unit tests, integration tests,
#                   a short run of every fuzz target
#   make fuzz       run every fuzz target for FUZZ_SECONDS (default 600)
#   make tsan       ThreadSanitizer build of the server, then the integration
#                   tests of storage, durability and ALTER against it
#   make bench-*    benchmarks; results go to docs/benchmarks/
#
# Every target that builds first runs scripts/install-deps.sh, which
# installs missing Debian packages and is a no-op otherwise.

JOBS         ?= $(shell nproc)
PYTHON       ?= /usr/bin/python3
FUZZ_SECONDS ?= 30
CMAKE_FLAGS  ?=

.PHONY: all deps build build-asan build-fuzz run test unit integration \
        fuzz-smoke fuzz bench-server bench-fulltext bench-vector clean help lint \
        ort models bench-embed bench-storage bench-scan bench-zones bench-suggest bench-autocomplete bench-grouping bench-fuzzy bench-hybrid bench-regex bench-analysis bench-wildcards bench-wildcards2 bench-wildcards-stem bench-parity tsan

all: build

deps:
	@scripts/install-deps.sh

build: deps
	@cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_FLAGS) >/dev/null
	@cmake --build build -j $(JOBS)

build-asan: deps
	@cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DLOUPE_SANITIZE=ON \
	    -DCMAKE_C_FLAGS_DEBUG="-O1 -g" $(CMAKE_FLAGS) >/dev/null
	@cmake --build build-asan -j $(JOBS)

build-tsan: deps
	@cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS_DEBUG="-O1 -g" \
	    -DCMAKE_C_FLAGS="-fsanitize=thread" $(CMAKE_FLAGS) >/dev/null
	@cmake --build build-tsan -j $(JOBS) --target loupe loupe-load

# Not part of `make test` (the ASan build is): run it after changing locks.
# tests/tsan.supp names the reports known to be false (see there).
tsan: build-tsan ort models
	@TSAN_OPTIONS="halt_on_error=0 suppressions=$(CURDIR)/tests/tsan.supp" \
	    LOUPE_BIN=$(CURDIR)/build-tsan/loupe $(PYTHON) -m pytest -q -p no:cacheprovider \
	    tests/integration/test_segments.py tests/integration/test_durability.py \
	    tests/integration/test_alter.py tests/integration/test_knn.py

build-fuzz: deps
	@cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Debug \
	    -DCMAKE_C_FLAGS_DEBUG="-O1 -g" -DLOUPE_FUZZ=ON $(CMAKE_FLAGS) >/dev/null
	@cmake --build build-fuzz -j $(JOBS)

# ONNX Runtime's CPU library from the npm package onnxruntime-node, into
# vendor/onnxruntime/ (embed/ loads it with dlopen; loupe runs without it).
ort:
	@scripts/install-ort.sh

# Test models with the exact architecture of all-MiniLM-L12-v2 / -L6-v2 and
# deterministic weights, next to the real tokenizer files: models/loupe-test/.
# Generated once and cached (not committed).
models: deps
	@$(PYTHON) scripts/gen-test-model.py

run: build
	./build/loupe serve

# The whole suite. Unit tests run under ASan+UBSan; the integration tests
# start the real server (release and sanitizer builds) and talk to it with
# pymysql, the mariadb client and raw sockets.
test: build build-asan build-fuzz ort models
	@$(MAKE) --no-print-directory unit integration fuzz-smoke
	@echo "make test: all passed"

# The sanitizer build runs every unit test; the HNSW recall check at full
# size (20k x 128) needs an optimised build, so it runs again in build/.
unit: build build-asan ort models
	@cd build-asan && ctest --output-on-failure -j $(JOBS)
	@cd build && ctest --output-on-failure -R '^test_vec_hnsw$$'

integration: build build-asan ort models
	@LOUPE_BIN=$(CURDIR)/build-asan/loupe $(PYTHON) -m pytest -q -p no:cacheprovider tests/integration
	@LOUPE_BIN=$(CURDIR)/build/loupe $(PYTHON) -m pytest -q -p no:cacheprovider tests/integration

fuzz-smoke: build-fuzz
	@tests/fuzz/run.sh build-fuzz $(FUZZ_SECONDS)

fuzz: build-fuzz
	@tests/fuzz/run.sh build-fuzz $(if $(filter 30,$(FUZZ_SECONDS)),600,$(FUZZ_SECONDS))

bench-server: build
	@scripts/install-deps.sh bench
	@$(PYTHON) bench/server/run.py

# Every IR collection in ../shared/data: loupe next to SQLite FTS5, Xapian
# and Sphinx (quality, queries/s per query type, indexing, size).
bench-fulltext: build
	@scripts/install-deps.sh bench
	@$(PYTHON) bench/fulltext/run.py

# What word forms and exceptions cost indexing (cisi, in process).
bench-analysis: build
	@$(PYTHON) bench/fulltext/analysis.py

# What ZONE: and ZONESPAN: cost a query (SciFact as HTML, one server).
bench-zones: build
	@scripts/install-deps.sh bench
	@$(PYTHON) bench/fulltext/zones.py

# CALL SUGGEST on SciFact's dictionary (docs/benchmarks/suggest.md); with
# BASELINE=path/to/loupe, that build timed beside this one in the same run.
bench-suggest: build
	@scripts/install-deps.sh bench
	@$(PYTHON) bench/fulltext/suggest.py $(if $(BASELINE),--baseline $(BASELINE))

# CALL AUTOCOMPLETE on SciFact's dictionary (docs/benchmarks/autocomplete.md);
# with BASELINE=path/to/loupe, that build timed beside this one.
bench-autocomplete: build
	@scripts/install-deps.sh bench
	@$(PYTHON) bench/fulltext/autocomplete.py $(if $(BASELINE),--baseline $(BASELINE))

# GROUP BY and FACET over 1M rows (docs/benchmarks/grouping.md); with
# BASELINE=path/to/loupe, that build timed beside this one in the same run.
bench-grouping: build
	@scripts/install-deps.sh bench
	@$(PYTHON) bench/sql/grouping.py $(if $(BASELINE),--baseline $(BASELINE))

# OPTION fuzzy=1 on SciFact, beside the queries spelled right:
# docs/benchmarks/fuzzy.md; with BASELINE=path/to/loupe, that build too.
bench-fuzzy: build
	@scripts/install-deps.sh bench
	@$(PYTHON) bench/fulltext/fuzzy.py $(if $(BASELINE),--baseline $(BASELINE))

# REGEX(/…/) on SciFact's dictionary, beside the wildcards finding the same
# terms: docs/benchmarks/regex.md.
bench-regex: build
	@scripts/install-deps.sh bench
	@$(PYTHON) bench/fulltext/regex.py

# Infix wildcards (`*abcd*`, `*abcde`) on SciFact, loupe next to Sphinx's
# dict=keywords infix index, over the MySQL protocol.
bench-wildcards: build
	@scripts/install-deps.sh bench
	@$(PYTHON) bench/fulltext/wildcards.py

# The same with min_infix_len 2 and 2-letter patterns (*ab*).
bench-wildcards2: build
	@scripts/install-deps.sh bench
	@$(PYTHON) bench/fulltext/wildcards.py --infix 2

bench-wildcards-stem: build
	@scripts/install-deps.sh bench
	@$(PYTHON) bench/fulltext/wildcards.py --stem

# MATCH syntax: the same query to loupe and to Sphinx 2.2.11 over one small
# table; the rows each returns compared (docs/benchmarks/parity.md).
bench-parity: build
	@scripts/install-deps.sh bench
	@$(PYTHON) bench/fulltext/parity.py

# loupe's HNSW next to hnswlib (native -march=native build), python3-hnswlib
# and faiss on clustered 100k x 128 / 384 sets and ../shared/data/vectors.
bench-vector: build
	@scripts/install-deps.sh bench
	@$(PYTHON) bench/vector/run.py

lint:
	@cppcheck --quiet --error-exitcode=1 --enable=warning,performance,portability \
	    --inline-suppr -I src src

clean:
	rm -rf build build-asan build-fuzz build-tsan

help:
	@sed -n '2,14p' Makefile

# Embeddings: the raw ONNX Runtime ceiling (one document per Run, 1 and 2
# threads), INSERT through the server at threads x batch, and padded
# batches with spinning for contrast (L12 test model).
bench-embed: build ort models
	@$(PYTHON) bench/embed/run.py

# Hybrid search (MATCH with knn(), hybrid_match()) on SciFact with the test
# model, beside its two halves: time per query (docs/benchmarks/hybrid.md).
bench-hybrid: build ort models
	@scripts/install-deps.sh bench
	@$(PYTHON) bench/fulltext/hybrid.py

# Storage: inserts/s at batch 1/100/1000 x 1/8 threads under binlog_flush
# commit and 1s, loupe next to Sphinx's RT index (loupe-load drives both);
# cold start, memory and disk per row of a 1,000,000-row table.
bench-storage: build
	@scripts/install-deps.sh bench
	@$(PYTHON) bench/storage/run.py

# Attribute scans (WHERE on numeric attributes, no MATCH): loupe's column
# arrays vs its row-by-row path vs Sphinx's RT index, same rows.
bench-scan: build
	@scripts/install-deps.sh bench
	@$(PYTHON) bench/storage/scan.py
