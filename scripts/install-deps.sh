#!/usr/bin/env bash
# Installs the Debian packages loupe needs to build, test and benchmark, when
# they are missing. Idempotent: when everything is present it only checks
# (dpkg-query) and exits, so `make`, `make run` and `make test` call it on
# every run.
#
#   scripts/install-deps.sh          build + test packages
#   scripts/install-deps.sh bench    also the peers the benchmarks compare with
set -euo pipefail

build_pkgs=(
  build-essential cmake pkg-config clang libclang-rt-14-dev
  libxxhash-dev libjansson-dev libmicrohttpd-dev libcmocka-dev libssl-dev
  libutf8proc-dev libstemmer-dev libpcre2-dev libzstd-dev zlib1g-dev wamerican
  mariadb-client libmariadb-dev python3 python3-pymysql python3-pytest
  python3-numpy python3-onnx python3-geographiclib
)
bench_pkgs=( sphinxsearch python3-xapian sqlite3 libsqlite3-dev libxapian-dev
             libhnswlib-dev python3-hnswlib python3-faiss python3-numpy )

want=("${build_pkgs[@]}")
if [ "${1:-}" = bench ]; then want+=("${bench_pkgs[@]}"); fi

missing=()
for p in "${want[@]}"; do
  st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [ "$st" = "install ok installed" ] || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${missing[*]}" >&2
SUDO=
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO=sudo; else
    echo "install-deps: missing packages and not root: apt-get install ${missing[*]}" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
# Refresh the package lists only when apt has never fetched them or an
# install fails for want of them.
if ! ls /var/lib/apt/lists/*_Packages >/dev/null 2>&1; then $SUDO apt-get update -q; fi
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}" ||
  { $SUDO apt-get update -q && $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"; }
