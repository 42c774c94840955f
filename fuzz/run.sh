#!/usr/bin/env bash
# Fuzzes vantage's targets with libFuzzer (cargo-fuzz), one after the other, each until RUNS
# executions (default 10⁶) or MAX_SECONDS (default 900), whichever comes first. New inputs that
# reach new code go to fuzz/corpus/<target>/ (kept in git); a crash, panic, hang over 1 s or
# allocation over 2 GiB stops the target and leaves the input in fuzz/artifacts/<target>/.
# Each run appends "target executions seconds result build" to fuzz/runs.tsv (build: `default`, or
# the FEATURES it was built with, `parquet`).
# Usage: fuzz/run.sh [TARGET ...]   (default: every target; `cargo fuzz list` names them)
# Needs: cargo install cargo-fuzz; RUSTC_BOOTSTRAP=1 lets the stable toolchain build with the
# sanitizer-coverage flags cargo-fuzz passes (no nightly toolchain can be installed here).
set -euo pipefail
cd "$(dirname "$0")"
. ./limits.sh
export RUSTC_BOOTSTRAP=1
features="${FEATURES:-}"
RUSTC_BOOTSTRAP=1 cargo fuzz build -s none ${features:+--features "$features"} >/dev/null
seeds="${SEEDS:-/tmp/vantage-seeds}"
[ -d "$seeds" ] || python3 seed.py "$seeds" >/dev/null
targets=("$@")
[ ${#targets[@]} -gt 0 ] || mapfile -t targets < <(cargo fuzz list ${features:+--features "$features"} 2>/dev/null || cargo fuzz list)
bin="target/x86_64-unknown-linux-gnu/release"
mkdir -p logs
for t in "${targets[@]}"; do
  [ -x "$bin/$t" ] || { echo "$t: not built (FEATURES=parquet for the Parquet targets)"; continue; }
  mkdir -p "corpus/$t" "artifacts/$t"
  log="logs/$t.log"
  max_len=$(max_len_of "$t")
  start=$(date +%s)
  set +e
  "$bin/$t" "corpus/$t" "$seeds/$t" -runs="${RUNS:-1000000}" -max_total_time="${MAX_SECONDS:-900}" \
    "${LIMITS[@]}" -max_len="${MAX_LEN:-$max_len}" \
    -artifact_prefix="artifacts/$t/" -print_final_stats=1 >"$log" 2>&1
  rc=$?
  set -e
  runs=$(grep -a -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  result=$([ $rc -eq 0 ] && echo ok || echo "finding (exit $rc, see $log)")
  printf '%s\t%s\t%s\t%s\t%s\n' "$t" "${runs:-0}" "$(( $(date +%s) - start ))" "$result" "${features:-default}" | tee -a runs.tsv
done
