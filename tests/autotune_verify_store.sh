#!/usr/bin/env bash
# autotune --verify-store end to end: a store autotune has just written passes entry by entry;
# entries added by hand are run as they are keyed (a batched product with transposed operands
# passes); one whose config cannot run on this device and one the loader refuses fail with
# their reasons while the others still pass, and the exit status says so.
# Usage: autotune_verify_store.sh <autotune binary> <space>
set -euo pipefail
autotune=$1 space=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
trap 'echo "autotune_verify_store.sh: line $LINENO failed"; tail -n 20 "$dir"/*.log 2>/dev/null' ERR
store=$dir/store.yaml

"$autotune" --space "$space" --budget 3 --reps 2 --out "$store" --shape 13x17x19,29x31x37 --dtype fp32,fp16 > "$dir/tune.log" 2>&1
"$autotune" --verify-store "$store" > "$dir/good.log"
[ "$(grep -c ': ok$' "$dir/good.log")" = 4 ] || { echo "expected 4 entries verified"; exit 1; }
grep -q '0 of 4 entries failed' "$dir/good.log"

# A batched product with transposed operands (legal here), an fp16 entry whose config needs
# tensor cores, which host spaces do not have, and one with a zero-wide micro-tile, which the
# loader refuses.
cat >> "$store" <<ENTRIES
  - {kernel: batched, dtype: f32, order: tt, m: 7, n: 9, k: 45, batch: 3, config: mb16_nb16_kb32_tm4_tn4_team1, gflops: 1, default_gflops: 1, candidates: 1}
  - {kernel: gemm, dtype: f16, order: nn, m: 40, n: 40, k: 40, batch: 1, config: mb64_nb64_kb32_tm32_tn32_team128_tc, gflops: 1, default_gflops: 1, candidates: 1}
  - {kernel: gemm, dtype: f32, order: nn, m: 40, n: 40, k: 40, batch: 1, config: mb64_nb64_kb32_tm0_tn8_team1, gflops: 1, default_gflops: 1, candidates: 1}
ENTRIES
if "$autotune" --verify-store "$store" > "$dir/planted.log"; then echo "a store with bad entries verified"; exit 1; fi
grep -q 'batched_f32_tt_m7_n9_k45_b3 mb16_nb16_kb32_tm4_tn4_team1: ok$' "$dir/planted.log"
grep -q 'gemm_f16_nn_m40_n40_k40_b1 mb64_nb64_kb32_tm32_tn32_team128_tc: FAILED, cannot run here: .*tensor cores' "$dir/planted.log"
grep -q 'FAILED, refused on load: .*tm0' "$dir/planted.log"
[ "$(grep -c ': ok$' "$dir/planted.log")" = 5 ] || { echo "expected the other 5 entries verified"; exit 1; }
grep -q '2 of 7 entries failed' "$dir/planted.log"
echo "verify-store checks passed ($space)"
