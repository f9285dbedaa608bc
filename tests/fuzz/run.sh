#!/usr/bin/env bash
# Runs every libFuzzer target in BUILD_DIR for SECONDS each, starting from the
# committed seed corpus (tests/fuzz/corpus/<name>/), which is only read: new
# inputs go to a scratch folder. JOBS targets run at once (default: one per
# CPU; each target is one process on one core). Fails when any target finds a
# crash, leak or timeout, after printing the end of its log.
#   tests/fuzz/run.sh BUILD_DIR SECONDS [JOBS]
set -euo pipefail
build=$1; secs=$2; jobs=${3:-$(nproc)}
here=$(cd "$(dirname "$0")" && pwd)

# One target: its log in $build/fuzz-<name>.log, its exit status in
# $build/fuzz-<name>.rc.
run_one() {
  local bin=$1 name=$2 scratch rc=0
  local seeds="$here/corpus/$name"; mkdir -p "$seeds"
  scratch=$(mktemp -d)
  local dict=(); [ -f "$here/$name.dict" ] && dict=(-dict="$here/$name.dict")
  "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=0 \
      -artifact_prefix="$build/fuzz-$name-" "${dict[@]}" "$scratch" "$seeds" \
      >"$build/fuzz-$name.log" 2>&1 || rc=$?
  rm -rf "$scratch"
  echo "$rc" >"$build/fuzz-$name.rc"
}

names=()
for bin in "$build"/tests/fuzz/fuzz_*; do
  [ -x "$bin" ] || continue
  name=$(basename "$bin"); name=${name#fuzz_}
  names+=("$name")
  rm -f "$build/fuzz-$name.rc"
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
  echo "fuzz: $name for ${secs}s"
  run_one "$bin" "$name" &
done
wait
[ ${#names[@]} -gt 0 ] || { echo "fuzz: no targets in $build"; exit 1; }

failed=0
for name in "${names[@]}"; do
  rc=$(cat "$build/fuzz-$name.rc" 2>/dev/null || echo "none")
  if [ "$rc" = 0 ]; then
    echo "fuzz: $name: $(grep -E '^#[0-9]+.*DONE|Done [0-9]+ runs' "$build/fuzz-$name.log" | tail -1 || true)"
  else
    tail -50 "$build/fuzz-$name.log"
    echo "fuzz: $name FAILED, exit status $rc (log: $build/fuzz-$name.log)"
    failed=1
  fi
done
exit $failed
