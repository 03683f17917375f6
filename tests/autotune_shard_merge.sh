#!/usr/bin/env bash
# autotune --shard and autotune merge end to end: two shards tuned apart and merged hold the
# problems of one unsharded run; a clash keeps the faster entry and says so; a store of another
# device, a bad entry or a missing file refuses the merge and leaves the output as it was; bad
# --shard, --claim and --time-limit values end with exit status 1 and a message; a run that
# finds every problem claimed tunes none; --time-limit stops a run between shapes with the
# tuned ones stored.
# Usage: autotune_shard_merge.sh <autotune binary> <space>
set -euo pipefail
autotune=$1 space=$2
# shellcheck source=support/checks.sh
source "$(dirname "$0")/support/checks.sh"
export KOKKOS_NUM_THREADS=1  # one device fingerprint for every run, whatever the machine
# problems <store>: its problems, one line each, sorted (configs and speeds left out).
problems() { grep -o 'kernel: [^}]*batch: [0-9]*' "$1" | sort; }
shapes=--shape=8x8x8,16x16x16,24x8x8,8x8x8,32x16x8
tune=("$autotune" --space "$space" --reps 2 --budget 3 "$shapes")

# Two shards and one whole run: the same problems, each once (8x8x8 is asked for twice).
"${tune[@]}" --shard 0/2 --out "$dir/s0.yaml" > "$dir/s0.log" 2>&1 || fail "shard 0/2: $(cat "$dir/s0.log")"
"${tune[@]}" --shard 1/2 --out "$dir/s1.yaml" > "$dir/s1.log" 2>&1 || fail "shard 1/2: $(cat "$dir/s1.log")"
"${tune[@]}" --out "$dir/whole.yaml" > "$dir/whole.log" 2>&1 || fail "unsharded run: $(cat "$dir/whole.log")"
grep -q "shard 0/2: 2 of 4 problems" "$dir/s0.log" || fail "shard 0/2 does not say it takes 2 of 4 problems"
[ "$(problems "$dir/whole.yaml" | wc -l)" = 4 ] || fail "the unsharded run stored $(problems "$dir/whole.yaml" | wc -l) problems, want 4"
[ -z "$(comm -12 <(problems "$dir/s0.yaml") <(problems "$dir/s1.yaml"))" ] || fail "the shards share problems"
"$autotune" merge --out "$dir/merged.yaml" "$dir/s0.yaml" "$dir/s1.yaml" > "$dir/merge.log" 2>&1 || fail "merge: $(cat "$dir/merge.log")"
[ "$(problems "$dir/merged.yaml")" = "$(problems "$dir/whole.yaml")" ] || fail "merged shards hold other problems than the unsharded run"
grep -q "4 entries (4 added, 0 clashes)" "$dir/merge.log" || fail "merge summary: $(cat "$dir/merge.log")"
# An empty shard still leaves a store, so a merge job finds one per shard.
"${tune[@]}" --shard 6/7 --out "$dir/s6.yaml" > /dev/null 2>&1 || fail "empty shard 6/7 failed"
grep -q "entries: \[\]" "$dir/s6.yaml" 2> /dev/null || fail "empty shard 6/7 left no empty store"

# A clash: the same problem at two speeds and configs; the faster stays, and merge says so.
# The faster entries' blocks are twice the tuned ones, which keeps them multiples of the
# micro-tile whatever configs this machine's tune chose.
perl -pe 's/gflops: [0-9.e+-]*, default/gflops: 1e6, default/; s/config: mb(\d+)_nb(\d+)/"config: mb".($1*2)."_nb".($2*2)/e' "$dir/s0.yaml" > "$dir/fast.yaml"
first=$(grep -m1 -o 'm: [0-9]*, n: [0-9]*, k: [0-9]*' "$dir/s0.yaml")
fast=$(grep "$first" "$dir/fast.yaml" | grep -o 'config: [^,]*' | cut -d' ' -f2)
"$autotune" merge --out "$dir/merged.yaml" "$dir/fast.yaml" > "$dir/clash.log" 2>&1 || fail "clash merge: $(cat "$dir/clash.log")"
grep -q "^clash: gemm_f32_nn_.*: kept $dir/fast.yaml's $fast (1e+06 GFLOP/s) over $dir/merged.yaml's .*, the faster$" "$dir/clash.log" ||
  fail "no clash line naming the winner: $(cat "$dir/clash.log")"
grep "$first" "$dir/merged.yaml" | grep -q "config: $fast, gflops: 1e+06" || fail "the faster entry did not win: $(grep "$first" "$dir/merged.yaml")"
[ "$(problems "$dir/merged.yaml")" = "$(problems "$dir/whole.yaml")" ] || fail "the clash merge changed the problems"

# Refusals leave the output as it was.
cp "$dir/merged.yaml" "$dir/before.yaml"
sed 's/threads: 1}/threads: 7}/' "$dir/s1.yaml" > "$dir/foreign.yaml"
refused "foreign.yaml: holds configs of $space on" "$autotune" merge --out "$dir/merged.yaml" "$dir/s0.yaml" "$dir/foreign.yaml"
grep -qF "7 threads), but $dir/s0.yaml holds configs of" "$dir/err" || fail "the foreign-device refusal does not name both stores: $(cat "$dir/err")"
sed '0,/gflops: [0-9.e+-]*, default/s//gflops: inf, default/' "$dir/s1.yaml" > "$dir/bad.yaml"
refused "bad.yaml: line 8, column" "$autotune" merge --out "$dir/merged.yaml" "$dir/s0.yaml" "$dir/bad.yaml"
grep -qF "is not a finite number > 0" "$dir/err" || fail "the bad-entry refusal does not say why: $(cat "$dir/err")"
refused "missing.yaml: cannot open" "$autotune" merge --out "$dir/merged.yaml" "$dir/s0.yaml" "$dir/missing.yaml"
refused "holds configs of $space on" "$autotune" merge --out "$dir/foreign.yaml" "$dir/s0.yaml"
cmp -s "$dir/merged.yaml" "$dir/before.yaml" || fail "a refused merge changed the output"
ls "$dir" | grep -q '\.tmp\.' && fail "a temporary store file was left behind"
refused "nothing to merge" "$autotune" merge --out "$dir/merged.yaml"
refused "--out FILE is required" "$autotune" merge "$dir/s0.yaml"
refused "unknown option --bogus" "$autotune" merge --bogus --out "$dir/merged.yaml" "$dir/s0.yaml"
refused "option --out is given 2 times; give it once" "$autotune" merge --out "$dir/a.yaml" --out "$dir/b.yaml" "$dir/s0.yaml"
[ ! -e "$dir/a.yaml" ] && [ ! -e "$dir/b.yaml" ] || fail "a refused merge wrote a store"

# Bad shards and time limits: refused before anything is written.
for shard in 2/2 5/2 -1/2 1/0 1 /2 1/ 1/2/3 x/y; do
  refused "bad shard '$shard'" "${tune[@]}" --shard "$shard" --out "$dir/never.yaml"
done
for limit in 0s -5m 10 10d nans infh 9999999h; do
  refused "option --time-limit: bad duration '$limit'" "${tune[@]}" --time-limit "$limit" --out "$dir/never.yaml"
done
refused "--shard and --claim both split the problem list: give one" "${tune[@]}" --shard 0/2 --claim "$dir/claims" --out "$dir/never.yaml"
touch "$dir/a-file"
refused "claims directory $dir/a-file: not a directory" "${tune[@]}" --claim "$dir/a-file" --out "$dir/never.yaml"
refused "claims directory $dir/no/claims: cannot create it: No such file or directory" "${tune[@]}" --claim "$dir/no/claims" --out "$dir/never.yaml"
[ ! -e "$dir/never.yaml" ] || fail "a refused run wrote a store"

# Claims: a run finding every problem claimed tunes none and still leaves its (empty) store.
"${tune[@]}" --claim "$dir/claims" --out "$dir/c0.yaml" > "$dir/c0.log" 2>&1 || fail "claiming run: $(cat "$dir/c0.log")"
"${tune[@]}" --claim "$dir/claims" --out "$dir/c1.yaml" > "$dir/c1.log" 2>&1 || fail "second claiming run: $(cat "$dir/c1.log")"
[ "$(problems "$dir/c0.yaml")" = "$(problems "$dir/whole.yaml")" ] || fail "the first claiming run did not tune the whole list"
grep -q "claims: 0 of 4 problems tuned here, 4 claimed by other runs" "$dir/c1.log" && grep -q "entries: \[\]" "$dir/c1.yaml" ||
  fail "the second claiming run: $(tail -n 3 "$dir/c1.log")"

# --time-limit: a run far longer than the limit stops between shapes, keeping the tuned ones.
many=$(for k in 256 264 272 280 288 296 304 312 320 328 336 344; do printf '256x256x%s,' $k; done)
status=0
timeout 300 "$autotune" --space "$space" --reps 20 --strategy exhaustive --budget 600s --time-limit 2s --shape "$many" \
  --out "$dir/limited.yaml" > "$dir/limited.log" 2>&1 || status=$?
stored=$(problems "$dir/limited.yaml" 2> /dev/null | wc -l)
{ [ "$status" = 0 ] && grep -q -- "--time-limit 2s reached: $stored of 12 shapes done" "$dir/limited.log" && [ "$stored" -ge 1 ] &&
  [ "$stored" -lt 12 ]; } || fail "--time-limit 2s: exit $status, $stored of 12 stored; log: $(tail -n 3 "$dir/limited.log")"

finish "shard and merge ($space)"
