#!/usr/bin/env bash
# Puts ONNX Runtime's CPU library where loupe looks for it by default:
# vendor/onnxruntime/libonnxruntime.so.1 (see LOUPE_ORT_DEFAULT in
# CMakeLists.txt). It comes from the npm package onnxruntime-node, installed
# with --ignore-scripts so its postinstall step does not try to download GPU
# providers. Idempotent: a no-op when the library is already there.
#
#   scripts/install-ort.sh            (ORT_VERSION=1.30.0 by default)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dest="$root/vendor/onnxruntime"
ver=${ORT_VERSION:-1.30.0}
[ -f "$dest/libonnxruntime.so.1" ] && [ -f "$dest/VERSION" ] &&
  [ "$(cat "$dest/VERSION")" = "$ver" ] && exit 0

if ! command -v npm >/dev/null 2>&1; then
  echo "install-ort: installing npm" >&2
  SUDO=; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get install -y -q --no-install-recommends npm ||
    { $SUDO apt-get update -q && $SUDO apt-get install -y -q --no-install-recommends npm; }
fi

arch=$(uname -m); case "$arch" in x86_64) arch=x64;; aarch64) arch=arm64;; esac
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
echo "install-ort: npm install onnxruntime-node@$ver --ignore-scripts" >&2
(cd "$tmp" && npm install --silent --no-audit --no-fund --ignore-scripts \
   "onnxruntime-node@$ver" >/dev/null)
lib="$tmp/node_modules/onnxruntime-node/bin/napi-v6/linux/$arch/libonnxruntime.so.1"
[ -f "$lib" ] || { echo "install-ort: $lib not in the package" >&2; exit 1; }
mkdir -p "$dest"
cp "$lib" "$dest/libonnxruntime.so.1.tmp" && mv "$dest/libonnxruntime.so.1.tmp" "$dest/libonnxruntime.so.1"
echo "$ver" > "$dest/VERSION"
echo "install-ort: $dest/libonnxruntime.so.1 ($ver)" >&2
