#!/usr/bin/env bash
# Shrinks each target's kept corpus (fuzz/corpus/<target>/) to a set cover of the code edges it
# reaches (libFuzzer -set_cover_merge=1, edges only), so what is committed stays small.
# Usage: fuzz/minimize.sh [TARGET ...]   (default: every target with a corpus)
set -euo pipefail
cd "$(dirname "$0")"
. ./limits.sh
bin="target/x86_64-unknown-linux-gnu/release"
targets=("$@")
[ ${#targets[@]} -gt 0 ] || mapfile -t targets < <(ls corpus)
for t in "${targets[@]}"; do
  [ -x "$bin/$t" ] && [ -d "corpus/$t" ] || continue
  rm -rf "corpus/$t.min" && mkdir "corpus/$t.min"
  "$bin/$t" -set_cover_merge=1 -use_counters=0 -max_len="$(max_len_of "$t")" "${LIMITS[@]}" \
    "corpus/$t.min" "corpus/$t" >"logs/$t.minimize.log" 2>&1
  before=$(ls "corpus/$t" | wc -l)
  rm -rf "corpus/$t" && mv "corpus/$t.min" "corpus/$t"
  echo "$t: $before -> $(ls "corpus/$t" | wc -l) inputs, $(du -sh --apparent-size "corpus/$t" | cut -f1)"
done
