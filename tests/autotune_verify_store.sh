#!/usr/bin/env bash
# autotune --verify-store end to end: a store autotune has just written passes entry by entry;
# entries added by hand are run as they are keyed (a batched product with transposed operands
# passes); one whose config cannot run on this device and one the loader refuses fail with
# their reasons while the others still pass, and the exit status says so. Entries of an older
# kernel generation are re-timed against the default on the store's own device (each kept at the
# code's generation or dropped, the store rewritten), and only verified on another's.
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
grep -q 're-timed' "$dir/good.log" && { echo "entries of the code's generation were re-timed"; exit 1; }
generation=$(sed -n 's/.*, generation: \([0-9]*\)[,}].*/\1/p' "$store" | head -n 1)
[ -n "$generation" ] || { echo "autotune wrote no generation"; exit 1; }

# A batched product with transposed operands (legal here), an fp16 entry whose config needs
# tensor cores, which host spaces do not have, and one with a zero-wide micro-tile, which the
# loader refuses.
cat >> "$store" <<ENTRIES
  - {kernel: batched, dtype: f32, order: tt, m: 7, n: 9, k: 45, batch: 3, config: mb16_nb16_kb32_tm4_tn4_team1, gflops: 1, default_gflops: 1, candidates: 1, generation: $generation}
  - {kernel: gemm, dtype: f16, order: nn, m: 40, n: 40, k: 40, batch: 1, config: mb64_nb64_kb32_tm32_tn32_team128_tc, gflops: 1, default_gflops: 1, candidates: 1, generation: $generation}
  - {kernel: gemm, dtype: f32, order: nn, m: 40, n: 40, k: 40, batch: 1, config: mb64_nb64_kb32_tm0_tn8_team1, gflops: 1, default_gflops: 1, candidates: 1, generation: $generation}
ENTRIES
if "$autotune" --verify-store "$store" > "$dir/planted.log"; then echo "a store with bad entries verified"; exit 1; fi
grep -q 'batched_f32_tt_m7_n9_k45_b3 mb16_nb16_kb32_tm4_tn4_team1: ok$' "$dir/planted.log"
grep -q 'gemm_f16_nn_m40_n40_k40_b1 mb64_nb64_kb32_tm32_tn32_team128_tc: FAILED, cannot run here: .*tensor cores' "$dir/planted.log"
grep -q 'FAILED, refused on load: .*tm0' "$dir/planted.log"
[ "$(grep -c ': ok$' "$dir/planted.log")" = 5 ] || { echo "expected the other 5 entries verified"; exit 1; }
grep -q '2 of 7 entries failed' "$dir/planted.log"

# The same tune as measured before generations were recorded: each entry re-timed here (kept or
# dropped: which one is the timing's to say), the kept ones rewritten at the code's generation.
old=$dir/old.yaml
"$autotune" --space "$space" --budget 3 --reps 2 --out "$old" --shape 13x17x19,29x31x37 --dtype fp32,fp16 > "$dir/tune-old.log" 2>&1
sed -i 's/, generation: [0-9]*//' "$old"
sed 's/name: [^,]*,/name: Some Other CPU,/' "$old" > "$dir/foreign.yaml"
cp "$dir/foreign.yaml" "$dir/foreign.before"
"$autotune" --verify-store "$dir/foreign.yaml" > "$dir/foreign.log"
grep -q 're-timed only on the store.s own device' "$dir/foreign.log"
[ "$(grep -c ': ok$' "$dir/foreign.log")" = 4 ] || { echo "another device's old entries were not just verified"; exit 1; }
cmp -s "$dir/foreign.yaml" "$dir/foreign.before" || { echo "another device's store was rewritten"; exit 1; }
"$autotune" --verify-store "$old" > "$dir/old.log"
[ "$(grep -Ec ': ok, generation 0 re-timed: (kept \(|dropped, slower than the default \()' "$dir/old.log")" = 4 ] ||
  { echo "expected 4 entries re-timed"; exit 1; }
kept=$(grep -c 're-timed: kept' "$dir/old.log" || true)
grep -q "4 entries of older kernel generations re-timed: $kept kept at generation $generation, $((4 - kept)) dropped; $old rewritten" "$dir/old.log"
[ "$(grep -Ec "generation: $generation[,}]" "$old")" = "$kept" ] || { echo "the store does not hold the $kept kept entries"; exit 1; }
[ "$(grep -c 'kernel:' "$old")" = "$kept" ] || { echo "dropped entries are still in the store"; exit 1; }
"$autotune" --verify-store "$old" > "$dir/again.log"
grep -q 're-timed' "$dir/again.log" && { echo "re-timed entries were re-timed again"; exit 1; }
echo "verify-store checks passed ($space)"
