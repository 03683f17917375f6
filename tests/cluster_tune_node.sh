#!/usr/bin/env bash
# cluster/tune_node.sh with two host processes (one thread each, as two GPUs would each take a
# shard): the merged store holds exactly the union of the two shard stores, and the same
# problems as one process tuning the same list; a failing shard fails the launcher, naming it.
# Usage: cluster_tune_node.sh <autotune binary> <space>
set -euo pipefail
autotune=$1 space=$2
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=support/checks.sh
source "$(dirname "$0")/support/checks.sh"
entries() { grep -o '{kernel: .*}' "$1" | sort; }
problems() { grep -o 'kernel: [^}]*batch: [0-9]*' "$1" | sort; }
tune_args=(--shape 8x8x8,16x16x16,24x8x8,32x32x32,40x8x16 --batch 1,2 --budget 3 --reps 2)

"$root/cluster/tune_node.sh" --space "$space" --processes 2 --threads 1 --autotune "$autotune" --out "$dir/node.yaml" \
  -- "${tune_args[@]}" > "$dir/node.log" 2>&1 || fail "tune_node.sh: $(cat "$dir/node.log")"
KOKKOS_NUM_THREADS=1 "$autotune" --space "$space" --out "$dir/single.yaml" "${tune_args[@]}" > "$dir/single.log" 2>&1 ||
  fail "single process: $(cat "$dir/single.log")"
shards=$dir/node.shards
for i in 0 1; do
  grep -q "taskset -c " "$dir/node.log" || fail "shard $i was not pinned: $(cat "$dir/node.log")"
  grep -q "shard $i/2: 5 of 10 problems" "$shards/shard-$i.log" || fail "shard $i/2 did not tune 5 of 10: $(head -n 3 "$shards/shard-$i.log")"
done
[ "$(entries "$dir/node.yaml")" = "$(cat <(entries "$shards/shard-0.yaml") <(entries "$shards/shard-1.yaml") | sort)" ] ||
  fail "the merged store is not the union of the shards"
[ "$(problems "$dir/node.yaml" | wc -l)" = 10 ] || fail "the merged store holds $(problems "$dir/node.yaml" | wc -l) problems, want 10"
[ "$(problems "$dir/node.yaml")" = "$(problems "$dir/single.yaml")" ] || fail "two processes and one tuned different problems"
[ "$(grep '^device:' "$dir/node.yaml")" = "$(grep '^device:' "$dir/single.yaml")" ] || fail "device fingerprints differ"

# A shard that fails: exit status 1, the shard and its log named.
status=0
"$root/cluster/tune_node.sh" --space "$space" --processes 2 --threads 1 --autotune "$autotune" --out "$dir/bad.yaml" \
  -- --shape 8x8x8 --budget 0 > "$dir/bad.log" 2>&1 || status=$?
{ [ "$status" = 1 ] && grep -q "shard 0/2 failed" "$dir/bad.log" && grep -q "bad budget '0'" "$dir/bad.log" &&
  grep -q "2 of 2 shards failed" "$dir/bad.log"; } || fail "failing shards: exit $status; $(cat "$dir/bad.log")"
status=0
"$root/cluster/tune_node.sh" --space "$space" --autotune "$autotune" --out "$dir/x.yaml" > "$dir/x.log" 2>&1 || status=$?
{ [ "$status" = 1 ] && grep -q -- "--processes N is required" "$dir/x.log"; } || fail "no --processes: exit $status; $(cat "$dir/x.log")"

finish "tune_node ($space: 10 problems from 2 processes, as from one)"
