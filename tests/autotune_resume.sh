#!/usr/bin/env bash
# autotune end to end on tiny shapes: an "interrupted" run (one shape stored), then --resume
# must keep that entry byte for byte and add the missing one, and tune again an entry measured on
# an older kernel generation; a foreign device's store and a malformed store must be refused with
# a message, never overwritten.
# Usage: autotune_resume.sh <autotune binary> <space>
set -euo pipefail
autotune=$1 space=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
trap 'echo "autotune_resume.sh: line $LINENO failed"; tail -n 5 "$dir"/*.log "$dir"/*.err 2>/dev/null' ERR
store=$dir/store.yaml
tune() { "$autotune" --space "$space" --budget 3 --reps 2 --out "$store" "$@"; }

tune --shape 13x17x19 > "$dir/first.log"
first_entry=$(grep 'm: 13, n: 17' "$store")
[ "$(grep -c 'kernel:' "$store")" = 1 ] || { echo "expected 1 entry after the first run"; exit 1; }

tune --shape 13x17x19,29x31x37 --resume > "$dir/resume.log" 2> "$dir/resume.err"
grep -q 'already in the store' "$dir/resume.err" || { echo "--resume did not skip the stored shape"; exit 1; }
[ "$(grep 'm: 13, n: 17' "$store")" = "$first_entry" ] || { echo "--resume changed the stored entry"; exit 1; }
grep -q 'm: 29, n: 31, k: 37' "$store" || { echo "--resume did not add the new shape"; exit 1; }
ls "$dir" | grep -q tmp && { echo "a temporary store file was left behind"; exit 1; }

# An entry without a generation was measured before generations were recorded: tuned again.
sed -i '/m: 29, n: 31/s/, generation: [0-9]*//' "$store"
tune --shape 13x17x19,29x31x37 --resume > "$dir/stale.log" 2> "$dir/stale.err"
grep -q 'gemm_f32_nn_m29_n31_k37_b1: it was measured on kernel generation 0, before its kernels changed at [1-9][0-9]*; tuning it again' "$dir/stale.err" ||
  { echo "--resume did not tune the stale entry again"; exit 1; }
grep 'm: 29, n: 31' "$store" | grep -Eq ', generation: [1-9][0-9]*[,}]' || { echo "the re-tuned entry has no generation"; exit 1; }
[ "$(grep 'm: 13, n: 17' "$store")" = "$first_entry" ] || { echo "--resume changed the current entry"; exit 1; }

# A device without a store of its own: searches also start from the store that serves it (named
# here: another CPU's).
sed 's/name: [^,]*,/name: Some Other CPU,/' "$store" > "$dir/neighbour.yaml"
KGEMM_CONFIG_FILE=$dir/neighbour.yaml "$autotune" --space "$space" --budget 3 --reps 2 --out "$dir/new.yaml" \
    --shape 13x17x19 > "$dir/seeded.log" 2>&1
grep -q "searches also start from $dir/neighbour.yaml (named by KGEMM_CONFIG_FILE: tuned for $space on Some Other CPU" \
    "$dir/seeded.log" || { echo "autotune did not start from the neighbour's store"; exit 1; }
KGEMM_CONFIG_FILE=$store "$autotune" --space "$space" --budget 3 --reps 2 --out "$dir/own.yaml" --shape 7x7x7 \
    > "$dir/own.log" 2>&1
grep -q 'searches also start' "$dir/own.log" && { echo "the device's own store was taken for a neighbour's"; exit 1; }

cp "$store" "$dir/before"
sed -i 's/name: [^,]*,/name: Some Other CPU,/' "$store"
cp "$store" "$dir/foreign"
if tune --shape 7x7x7 2> "$dir/foreign.err"; then echo "a foreign device's store was accepted"; exit 1; fi
grep -q 'holds configs of' "$dir/foreign.err" || { cat "$dir/foreign.err"; exit 1; }
cmp -s "$store" "$dir/foreign" || { echo "the foreign store was modified"; exit 1; }

printf 'device: {space: %s\nentries: [' "$space" > "$store"
if tune --shape 7x7x7 2> "$dir/bad.err"; then echo "a malformed store was accepted"; exit 1; fi
grep -q "autotune: $store: " "$dir/bad.err" || { cat "$dir/bad.err"; exit 1; }
echo "resume, foreign-store and malformed-store checks passed ($space)"
