#!/usr/bin/env bash
# kgemm-compare-strategies end to end: exhaustive autotune runs on tiny shapes write a cache with
# the device and each search's givens; `autotune retime` re-times each problem's leaders into it,
# with a short climb's choices beside them (--store); the tool replays every strategy on it (an
# unlimited budget keeps what exhaustive search keeps, judged either way; today's seeds for this
# build's device are those recorded), judges a second
# exhaustive run against it (--again), checks the dispatch model on it, and refuses what it cannot
# use with a message: a cache of searches cut short, --starts store without the device line, a bad
# --starts; retime refuses a cache of another device or without one, and a --store of another
# device or of none of its problems.
# Usage: compare_strategies.sh <autotune binary> <kgemm-compare-strategies binary> <space>
set -euo pipefail
autotune=$1 compare=$2 space=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
trap 'echo "compare_strategies.sh: line $LINENO failed"; tail -n 5 "$dir"/*.log "$dir"/*.err 2>/dev/null' ERR

"$autotune" --space "$space" --strategy exhaustive --budget 100000 --reps 1 --out "$dir/store.yaml" \
    --cache "$dir/cache.tsv" --shape 13x17x19,29x31x37,64x48x40 > "$dir/exhaustive.log" 2>&1
grep -q "^#device	$space	" "$dir/cache.tsv" || { echo "no #device line"; exit 1; }
[ "$(grep -c '^#search	' "$dir/cache.tsv")" = 3 ] || { echo "expected a #search line per problem"; exit 1; }

# Three leaders of each of the three problems re-timed in three rounds, and what the exhaustive
# run kept where it is none of them (its confirmation re-timed others than the first readings' top
# three): nine to twelve lines appended, the table a row per problem.
lines=$(wc -l < "$dir/cache.tsv")
"$autotune" retime --cache "$dir/cache.tsv" --top 3 --rounds 3 --reps 1 > "$dir/retime.log" 2> "$dir/retime.err"
added=$(( $(wc -l < "$dir/cache.tsv") - lines ))
[ "$added" -ge 9 ] && [ "$added" -le 12 ] || { echo "expected nine to twelve re-timed lines, not $added"; exit 1; }
[ "$(tail -n $added "$dir/cache.tsv" | grep -c '	re-timed: median of 3 rounds (')" = $added ] || { tail -n $added "$dir/cache.tsv"; exit 1; }
for shape in m13_n17_k19 m29_n31_k37 m64_n48_k40; do
  [ "$(tail -n $added "$dir/cache.tsv" | grep -c "^gemm_f32_nn_${shape}_b1	")" -ge 3 ] || { tail -n $added "$dir/cache.tsv"; exit 1; }
done
[ "$(grep -c '^gemm_f32_nn_' "$dir/retime.log")" = 3 ] || { cat "$dir/retime.log"; exit 1; }
grep -q '^geometric means over 3 problems: ' "$dir/retime.log" || { cat "$dir/retime.log"; exit 1; }
grep -q '^autotune retime: .* in 3 rounds, warm operands, into ' "$dir/retime.log" || { cat "$dir/retime.log"; exit 1; }

# A short climb's store judged beside the leaders: its config for each problem re-timed in the
# same rounds and shown over the re-timed best. The climb times cold operands: the store is made
# alike, and the run says which operands it timed.
"$autotune" --space "$space" --budget 2 --reps 1 --operands cold --out "$dir/climb.yaml" --shape 13x17x19,29x31x37,64x48x40 \
    > "$dir/climb.log" 2>&1
grep -q '^autotune: .*, strategy climb, cold operands, store ' "$dir/climb.log" || { cat "$dir/climb.log"; exit 1; }
[ "$(grep -c 'config: ' "$dir/climb.yaml")" = 3 ] || { cat "$dir/climb.yaml"; exit 1; }
"$autotune" retime --cache "$dir/cache.tsv" --store "$dir/climb.yaml" --top 3 --rounds 3 --reps 1 --operands cold \
    > "$dir/judged.log" 2> "$dir/judged.err"
grep -q '^autotune retime: .* in 3 rounds, cold operands, into ' "$dir/judged.log" || { cat "$dir/judged.log"; exit 1; }
grep -q "^$dir/climb.yaml's configs over the re-timed best, 3 problems: geometric mean [01][.][0-9]*, worst [01][.][0-9]*, [0-3] reach 0.98$" \
    "$dir/judged.log" || { cat "$dir/judged.log"; exit 1; }
grep -q "^$dir/climb.yaml's configs over what exhaustive search kept, 3 problems: geometric mean [0-9][.][0-9]*, worst [0-9][.][0-9]*, [0-3] reach 0.98$" \
    "$dir/judged.log" || { cat "$dir/judged.log"; exit 1; }
[ "$(grep -c '^gemm_f32_nn_.* [01][.][0-9][0-9][0-9] .*' "$dir/judged.log")" = 3 ] || { cat "$dir/judged.log"; exit 1; }

"$compare" --cache "$dir/cache.tsv" --seeds 2 --budgets 3,100000 --per-problem > "$dir/compare.log"
grep -q '^3 problems measured exhaustively' "$dir/compare.log" || { cat "$dir/compare.log"; exit 1; }
for strategy in random climb; do
  grep -q "^| $strategy | 100000 | 1.000 | 1.000 | 3 of 3 |" "$dir/compare.log" ||
    { echo "$strategy with an unlimited budget did not reach the exhaustive best"; cat "$dir/compare.log"; exit 1; }
done
grep -q '^| climb | 3 | ' "$dir/compare.log" || { echo "no row for budget 3"; exit 1; }
grep -q "^What exhaustive search keeps, over the fastest config's worth (--judge best's reference): geomean [01][.][0-9]*, worst [01][.][0-9]*, [0-3] reach 0.98$" \
    "$dir/compare.log" || { cat "$dir/compare.log"; exit 1; }
# Judged by each config's last reading against the fastest, an unlimited budget reaches it too.
"$compare" --cache "$dir/cache.tsv" --seeds 1 --budgets 100000 --judge best > "$dir/best.log"
grep -q "^| climb | 100000 | 1.000 | 1.000 | 3 of 3 |" "$dir/best.log" || { cat "$dir/best.log"; exit 1; }
if grep -q '^What exhaustive search keeps' "$dir/best.log"; then echo "--judge best compared exhaustive search with itself"; exit 1; fi
grep -q '^Dispatch model' "$dir/compare.log" || { echo "no dispatch model check"; exit 1; }
[ "$(grep -c '^| gemm_f32_nn_' "$dir/compare.log")" = 3 ] || { echo "expected a row per problem"; exit 1; }
# Each row says whether the best's block class is among the store's starts ("-": it gave none).
[ "$(grep -Ec '^\| gemm_f32_nn_[^|]*\|[^|]*\|[^|]*\| +(yes|no|-) \|' "$dir/compare.log")" = 3 ] ||
  { echo "expected yes, no or - for the best's class among the store's starts"; cat "$dir/compare.log"; exit 1; }

# The seeds autotune gives this build's device today (the default) are those it recorded
# measuring the cache here: the same table as the recorded ones.
"$compare" --cache "$dir/cache.tsv" --seeds 2 --budgets 3,100000 --per-problem --start-seeds recorded > "$dir/recorded.log"
diff "$dir/compare.log" "$dir/recorded.log" > /dev/null || { echo "today's seeds replayed otherwise than those recorded here"; diff "$dir/compare.log" "$dir/recorded.log"; exit 1; }

# --again: a cache judged against itself keeps the same configs (every share 1); two of its
# problems measured again are judged on the two alone; a cache of none of them is refused.
"$compare" --cache "$dir/cache.tsv" --again "$dir/cache.tsv" --seeds 1 --budgets 3 > "$dir/again-self.log"
grep -q "^Exhaustive search again (what .*cache.tsv kept, judged alike) on 3 problems: geomean 1.000, worst 1.000, 3 reach 0.98 of what this one kept$" \
    "$dir/again-self.log" || { cat "$dir/again-self.log"; exit 1; }
"$autotune" --space "$space" --strategy exhaustive --budget 100000 --reps 1 --out "$dir/again.yaml" \
    --cache "$dir/again.tsv" --shape 13x17x19,29x31x37 > "$dir/again-run.log" 2>&1
"$compare" --cache "$dir/cache.tsv" --again "$dir/again.tsv" --seeds 1 --budgets 3 > "$dir/again.log"
grep -q "^Exhaustive search again (what .*again.tsv kept, judged alike) on 2 problems: geomean [01][.][0-9]*, worst [01][.][0-9]*, [0-2] reach 0.98 of what this one kept$" \
    "$dir/again.log" || { cat "$dir/again.log"; exit 1; }
"$autotune" --space "$space" --strategy exhaustive --budget 100000 --reps 1 --out "$dir/apart.yaml" \
    --cache "$dir/apart.tsv" --shape 8x8x8 > "$dir/apart-run.log" 2>&1
if "$compare" --cache "$dir/cache.tsv" --again "$dir/apart.tsv" --seeds 1 --budgets 3 > /dev/null 2> "$dir/apart.err"; then
  echo "--again judged a cache of other problems"; exit 1
fi
grep -q "^kgemm-compare-strategies: --again: no problem of --cache was measured exhaustively there too" "$dir/apart.err" ||
  { cat "$dir/apart.err"; exit 1; }

# From a given store (the short climb's, less each problem's own entry: none of its configs left
# to start from) the searches replay too, and an unlimited budget still keeps what exhaustive
# search keeps.
"$compare" --cache "$dir/cache.tsv" --seeds 1 --budgets 100000 --store "$dir/climb.yaml" > "$dir/from-store.log"
grep -q "^| climb | 100000 | 1.000 | 1.000 | 3 of 3 |" "$dir/from-store.log" || { cat "$dir/from-store.log"; exit 1; }
if "$compare" --cache "$dir/cache.tsv" --starts seeds --store "$dir/climb.yaml" 2> "$dir/store-seeds.err"; then
  echo "--store was taken with --starts seeds"; exit 1
fi
grep -q "option --store: the searches start from a store only with --starts store, not seeds" "$dir/store-seeds.err" ||
  { cat "$dir/store-seeds.err"; exit 1; }

# Seeds as given and seeds alone replay too.
"$compare" --cache "$dir/cache.tsv" --seeds 1 --starts seeds --budgets 2 > "$dir/seeds.log"
"$compare" --cache "$dir/cache.tsv" --seeds 1 --starts recorded --budgets 2 --f32-seeds mb16_nb16_kb32_tm1_tn1_team1 > "$dir/given.log"

# Refusals, each naming what is wrong.
grep -v '^#device' "$dir/cache.tsv" > "$dir/no-device.tsv"
if "$compare" --cache "$dir/no-device.tsv" 2> "$dir/no-device.err"; then echo "a cache without its device was taken"; exit 1; fi
grep -q "needs the cache's #device line" "$dir/no-device.err" || { cat "$dir/no-device.err"; exit 1; }
if "$autotune" retime --cache "$dir/no-device.tsv" 2> "$dir/retime-no-device.err"; then echo "retime took a cache without its device"; exit 1; fi
grep -q "no-device.tsv has no #device line" "$dir/retime-no-device.err" || { cat "$dir/retime-no-device.err"; exit 1; }
sed 's/^#device\t\([^\t]*\)\t[^\t]*/#device\t\1\tAnother CPU/' "$dir/cache.tsv" > "$dir/other.tsv"
if "$autotune" retime --cache "$dir/other.tsv" 2> "$dir/other.err"; then echo "retime re-timed another device's cache"; exit 1; fi
grep -q "other.tsv was measured on $space on Another CPU .*: re-time it where it was measured" "$dir/other.err" || { cat "$dir/other.err"; exit 1; }
sed '/^device:/s/name: [^,]*/name: Another CPU/' "$dir/climb.yaml" > "$dir/other.yaml"
if "$autotune" retime --cache "$dir/cache.tsv" --store "$dir/other.yaml" 2> "$dir/other-store.err"; then echo "retime judged another device's store"; exit 1; fi
grep -q "other.yaml was tuned on .*, not on .* where .*cache.tsv was measured" "$dir/other-store.err" || { cat "$dir/other-store.err"; exit 1; }
"$autotune" --space "$space" --budget 2 --reps 1 --out "$dir/elsewhere.yaml" --shape 8x8x8 > "$dir/elsewhere.log" 2>&1
if "$autotune" retime --cache "$dir/cache.tsv" --store "$dir/elsewhere.yaml" 2> "$dir/elsewhere.err"; then echo "retime judged a store of other problems"; exit 1; fi
grep -q "elsewhere.yaml holds none of the problems .* measured exhaustively: nothing to judge" "$dir/elsewhere.err" || { cat "$dir/elsewhere.err"; exit 1; }
if "$compare" --cache "$dir/cache.tsv" --starts everywhere 2> "$dir/starts.err"; then echo "a bad --starts was taken"; exit 1; fi
grep -q "option --starts: 'everywhere' is not one of store, seeds, recorded" "$dir/starts.err" || { cat "$dir/starts.err"; exit 1; }
if "$compare" --cache "$dir/cache.tsv" --start-seeds yesterday 2> "$dir/start-seeds.err"; then echo "a bad --start-seeds was taken"; exit 1; fi
grep -q "option --start-seeds: 'yesterday' is not one of today, recorded" "$dir/start-seeds.err" || { cat "$dir/start-seeds.err"; exit 1; }
if "$compare" --cache "$dir/cache.tsv" --judge fastest 2> "$dir/judge.err"; then echo "a bad --judge was taken"; exit 1; fi
grep -q "option --judge: 'fastest' is not one of kept, best" "$dir/judge.err" || { cat "$dir/judge.err"; exit 1; }
"$autotune" --space "$space" --budget 3 --reps 1 --out "$dir/short.yaml" --cache "$dir/short.tsv" --shape 13x17x19 > "$dir/short.log" 2>&1
if "$compare" --cache "$dir/short.tsv" 2> "$dir/short.err"; then echo "a cut-short search was replayed"; exit 1; fi
grep -q 'no problem in the caches was measured exhaustively' "$dir/short.err" || { cat "$dir/short.err"; exit 1; }
if "$autotune" retime --cache "$dir/short.tsv" 2> "$dir/retime-short.err"; then echo "retime took a cut-short search"; exit 1; fi
grep -q 'no problem in the cache was measured exhaustively' "$dir/retime-short.err" || { cat "$dir/retime-short.err"; exit 1; }
printf '#search\tgemm_f32_nn_m13_n17_k19_b1\tmany\tmb16_nb16_kb32_tm1_tn1_team1\t-\tmb16_nb16_kb32_tm1_tn1_team1\n' > "$dir/bad.tsv"
if "$compare" --cache "$dir/bad.tsv" 2> "$dir/bad.err"; then echo "a bad cache line was taken"; exit 1; fi
grep -q "bad.tsv:1: not a measurement line ('many' is not a candidate count)" "$dir/bad.err" || { cat "$dir/bad.err"; exit 1; }
echo "compare_strategies.sh: ok"
