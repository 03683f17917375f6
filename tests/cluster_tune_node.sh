#!/usr/bin/env bash
# cluster/tune_node.sh with two host processes (one thread each, as two GPUs would each take a
# part), the list split by claims and by shards: the merged store holds exactly the union of
# the two processes' stores, and the same problems as one process tuning the same list, and its
# very entries when the processes replay that process's measurements; a failing process fails
# the launcher, naming it.
# Usage: cluster_tune_node.sh <autotune binary> <space>
set -euo pipefail
autotune=$1 space=$2
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=support/checks.sh
source "$(dirname "$0")/support/checks.sh"
entries() { grep -o '{kernel: .*}' "$1" | sort; }
problems() { grep -o 'kernel: [^}]*batch: [0-9]*' "$1" | sort; }
tune_args=(--shape 8x8x8,16x16x16,24x8x8,32x32x32,40x8x16 --batch 1,2 --budget 3 --reps 2)

node=("$root/cluster/tune_node.sh" --space "$space" --processes 2 --threads 1 --autotune "$autotune")
KOKKOS_NUM_THREADS=1 "$autotune" --space "$space" --out "$dir/single.yaml" --cache "$dir/single.tsv" "${tune_args[@]}" \
  > "$dir/single.log" 2>&1 || fail "single process: $(cat "$dir/single.log")"
# Claims (the default) split the list as the processes go, shards beforehand (5 problems each);
# either way the merged store is the union of the processes' stores, each problem tuned once.
for split in claim shard; do
  "${node[@]}" --split $split --out "$dir/$split.yaml" -- "${tune_args[@]}" > "$dir/$split.log" 2>&1 ||
    fail "tune_node.sh --split $split: $(cat "$dir/$split.log")"
  stores=$dir/$split.node
  grep -q "taskset -c " "$dir/$split.log" || fail "--split $split: processes not pinned: $(cat "$dir/$split.log")"
  for i in 0 1; do
    grep -q "^tune_node: process $i/2: wall time: [0-9.]* s for [0-9]* problems$" "$dir/$split.log" ||
      fail "--split $split: no wall time of process $i: $(cat "$dir/$split.log")"
  done
  grep -q "^tune_node: all processes ended, wall time [0-9.]* s$" "$dir/$split.log" || fail "no total wall time: $(cat "$dir/$split.log")"
  [ "$(entries "$dir/$split.yaml")" = "$(cat <(entries "$stores/process-0.yaml") <(entries "$stores/process-1.yaml") | sort)" ] ||
    fail "--split $split: the merged store is not the union of the processes' stores"
  [ -z "$(comm -12 <(problems "$stores/process-0.yaml") <(problems "$stores/process-1.yaml"))" ] ||
    fail "--split $split: both processes tuned $(comm -12 <(problems "$stores/process-0.yaml") <(problems "$stores/process-1.yaml"))"
  [ "$(problems "$dir/$split.yaml")" = "$(problems "$dir/single.yaml")" ] || fail "--split $split: two processes and one tuned different problems"
  [ "$(grep '^device:' "$dir/$split.yaml")" = "$(grep '^device:' "$dir/single.yaml")" ] || fail "device fingerprints differ"
done
for i in 0 1; do
  grep -q "shard $i/2: 5 of 10 problems" "$dir/shard.node/process-$i.log" || fail "shard $i/2 did not take 5 of 10"
done
grep -q "^claims: [0-9]* of 10 problems tuned here, [0-9]* claimed by other runs" "$dir/claim.node/process-0.log" ||
  fail "process 0 does not count its claims: $(tail -n 3 "$dir/claim.node/process-0.log")"
[ "$(ls "$dir/claim.node/claims" | wc -l)" = 10 ] || fail "want 10 claims, found $(ls "$dir/claim.node/claims")"
# A second run clears the first one's claims: all 10 problems are tuned again.
"${node[@]}" --out "$dir/claim.yaml" -- "${tune_args[@]}" > "$dir/again.log" 2>&1 || fail "second run: $(cat "$dir/again.log")"
[ "$(cat "$dir/claim.node/process-"[01].yaml | problems /dev/stdin | wc -l)" = 10 ] || fail "a second run did not tune all 10 problems again"

# Fed the single process's measurements (--replay), the processes search as it did: the merged
# store is its store, entry for entry, configs and speeds. So a split tune differs from one
# process only where their timings differ.
"${node[@]}" --out "$dir/replayed.yaml" -- "${tune_args[@]}" --replay "$dir/single.tsv" > "$dir/replayed.log" 2>&1 ||
  fail "replayed: $(cat "$dir/replayed.log")"
[ "$(entries "$dir/replayed.yaml")" = "$(entries "$dir/single.yaml")" ] ||
  fail "the replayed split stored other entries than the single process: $(diff <(entries "$dir/single.yaml") <(entries "$dir/replayed.yaml"))"

# A process that fails: exit status 1, the process and its log named.
status=0
"${node[@]}" --out "$dir/bad.yaml" -- --shape 8x8x8 --budget 0 > "$dir/bad.log" 2>&1 || status=$?
{ [ "$status" = 1 ] && grep -q "process 0/2 failed" "$dir/bad.log" && grep -q "bad budget '0'" "$dir/bad.log" &&
  grep -q "2 of 2 processes failed" "$dir/bad.log"; } || fail "failing processes: exit $status; $(cat "$dir/bad.log")"
status=0
"${node[@]}" --split halves --out "$dir/x.yaml" > "$dir/x.log" 2>&1 || status=$?
{ [ "$status" = 1 ] && grep -q -- "--split 'halves' is not claim or shard" "$dir/x.log"; } || fail "bad --split: exit $status; $(cat "$dir/x.log")"
status=0
"$root/cluster/tune_node.sh" --space "$space" --autotune "$autotune" --out "$dir/x.yaml" > "$dir/x.log" 2>&1 || status=$?
{ [ "$status" = 1 ] && grep -q -- "--processes N is required" "$dir/x.log"; } || fail "no --processes: exit $status; $(cat "$dir/x.log")"

finish "tune_node ($space: 10 problems from 2 processes, as from one)"
