#!/usr/bin/env bash
# Hostile command lines and environments for autotune and kgemm-run: each must end with exit
# status 1 and a message naming what is wrong (never a signal, a hang, a silent success or a
# store that loses or gains bad entries); two autotune runs on one store must end with the
# union of their entries.
# Usage: tools_bad_input.sh <autotune binary> <kgemm-run binary> <space>
set -euo pipefail
autotune=$1 run=$2 space=$3
# shellcheck source=support/checks.sh
source "$(dirname "$0")/support/checks.sh"
store=$dir/store.yaml
tune=("$autotune" --space "$space" --reps 2 --out "$store")

refused "option --batch: '0' is not an integer from 1" "${tune[@]}" --shape 8x8x8 --batch 0
refused "option --batch: '-3'" "${tune[@]}" --shape 8x8x8 --batch -3
refused "option --reps: '0' is not an integer from 1" "$autotune" --space "$space" --out "$store" --shape 8x8x8 --reps 0
refused "option --reps: '-1'" "$autotune" --space "$space" --out "$store" --shape 8x8x8 --reps -1
refused "option --image: '0'" "${tune[@]}" --image 0
refused "need image 32 to 1048576" "${tune[@]}" --image 16
refused "times batch 1431655766 exceeds" "${tune[@]}" --shape 3x1x1 --batch 1431655766
refused "'99999999999' is not an integer from 1" "${tune[@]}" --shape 99999999999x1x1
refused "need exactly three extents" "${tune[@]}" --shape 3x1x1x5
refused "need exactly three extents" "${tune[@]}" --shape 3x1
refused "'0' is not an integer from 1" "${tune[@]}" --shape 0x4x4
for budget in nan inf 0 0.5 1e10 -3 0s nans 30m; do
  refused "bad budget '$budget'" "${tune[@]}" --shape 8x8x8 --budget "$budget"
done
refused "option --resume takes no value" "${tune[@]}" --shape 8x8x8 --resume=yes
refused "option --reps is given 2 times" "${tune[@]}" --shape 8x8x8 --reps 3
refused "unknown operands 'hot' (expected warm or cold)" "${tune[@]}" --shape 8x8x8 --operands hot
refused "unknown operands '' (expected warm or cold)" "$autotune" retime --cache "$dir/none.tsv" --operands ""
[ ! -e "$store" ] || { echo "FAIL: a refused run wrote $store"; failures=$((failures + 1)); }

# A store that cannot be rewritten is refused before any shape is tuned (and merge before it
# reads its inputs): an empty or over-long name (the temporary file beside it adds 11 bytes),
# a read-only store, a lock that cannot be created, a directory that cannot be created.
# before_tuning <fragment> <command...>: refused, and no shape was tuned first.
before_tuning() {
  refused "$@"
  if grep -q '^\[1/' "$dir/err"; then fail "$2... tuned a shape before refusing"; fi
}
untouchable=("$autotune" --space "$space" --reps 2 --budget 1 --shape 8x8x8)
before_tuning "an empty name names no store file" "${untouchable[@]}" --out ""
before_tuning "an empty name names no store file" "${untouchable[@]}" --out=
long_name=$dir/$(printf 'x%.0s' $(seq 250)).yaml
before_tuning "may be at most 244 bytes: its temporary files add .tmp.XXXXXX; this one's is 255" "${untouchable[@]}" --out "$long_name"
"${untouchable[@]}" --out "$dir/read-only.yaml" > /dev/null 2>&1 || fail "tuning read-only.yaml"
chmod 0444 "$dir/read-only.yaml"
cp "$dir/read-only.yaml" "$dir/read-only.before"
before_tuning "read-only.yaml: is read-only (mode 0444" "${untouchable[@]}" --out "$dir/read-only.yaml"
refused "read-only.yaml: is read-only (mode 0444" "$autotune" merge --out "$dir/read-only.yaml" "$dir/read-only.before"
cmp -s "$dir/read-only.yaml" "$dir/read-only.before" && [ "$(stat -c %a "$dir/read-only.yaml")" = 444 ] ||
  fail "a read-only store was rewritten"
mkdir "$dir/lock-is-a-dir.yaml.lock"
before_tuning "cannot open the lock file $dir/lock-is-a-dir.yaml.lock" "${untouchable[@]}" --out "$dir/lock-is-a-dir.yaml"
refused "cannot open the lock file $dir/lock-is-a-dir.yaml.lock" "$autotune" merge --out "$dir/lock-is-a-dir.yaml" "$dir/read-only.before"
touch "$dir/a-file"
before_tuning "cannot create directory $dir/a-file" "${untouchable[@]}" --out "$dir/a-file/store.yaml"
[ ! -e "$long_name" ] && [ ! -e "$dir/lock-is-a-dir.yaml" ] || fail "a refused run wrote a store"

refused "option --reps: '0'" "$run" --space "$space" --reps 0
refused "option --batch: '0'" "$run" --space "$space" --batch 0
refused "'mb64_nb64_kb32_tm0_tn4_team16' is not a config string: 'tm0': tm must be 1 to 256" \
  "$run" --space "$space" --config mb64_nb64_kb32_tm0_tn4_team16
refused "'mb99999999999': mb must be 1 to 4096" "$run" --space "$space" --config mb99999999999_nb64_kb32_tm4_tn4_team16
refused "kb must be 1 to 4096" "$run" --space "$space" --config mb64_nb64_kb2147483647_tm4_tn4_team16
refused "kb must be 1 to 4096" "$run" --space "$space" --config mb64_nb64_kb536870912_tm4_tn4_team16

# kgemm-run's lists and formats: empty, repeated or unknown items are refused before any run.
refused "option --format: 'xml' is not one of table, csv, json" "$run" --space "$space" --format xml
refused "unknown space 'gpu'" "$run" --space "$space,gpu"
refused "option --space needs at least one value" "$run" --space ,
refused "option --space: lists '$space' twice" "$run" --space "$space,$space"
refused "option --image: '0' is not an integer from 1" "$run" --space "$space" --image 224,0
refused "option --image needs at least one value" "$run" --space "$space" --image=
refused "need image 32 to 1048576" "$run" --space "$space" --image 64,16
refused "option --batch: lists '1' twice" "$run" --space "$space" --batch 1,1
refused "option --batch: '-2'" "$run" --space "$space" --batch 1,-2
refused "option --dtype: lists 'fp32' twice" "$run" --space "$space" --dtype fp32,f32
refused "unknown dtype 'fp64'" "$run" --space "$space" --dtype fp32,fp64
refused "unknown model 'resnet99'" "$run" --space "$space" --model resnet99
refused "need exactly three extents" "$run" --space "$space" --shape 8x8x8,8x8
refused "option --shape: lists '8x8x8' twice" "$run" --space "$space" --shape 8x8x8 --shape 8x8x8
refused "--model and --image apply to a model only" "$run" --space "$space" --shape 8x8x8 --model resnet18
refused "--model and --image apply to a model only" "$run" --space "$space" --shape 8x8x8 --image 224
refused "option --progress takes no value" "$run" --space "$space" --progress=yes
refused "--why prints a table; drop --format" "$run" --space "$space" --why --format csv
refused "--why explains dispatch; --config bypasses it" "$run" --space "$space" --why --config mb64_nb64_kb32_tm4_tn4_team16
refused "option --why-store needs a file" "$run" --why-store=
refused "$dir/missing.yaml: cannot open" "$run" --why-store "$dir/missing.yaml"
refused "--why-store prints a table or CSV; drop --format json" "$run" --why-store "$dir/missing.yaml" --format json
# --why-store reads any device's store and runs nothing: a shape of its own is its exact entry,
# with the config the store holds for it. A build that does not compile the store's micro-tile
# (the Xeon's AVX-512 tiles in an AVX2 build) leaves the entry out, saying which tile.
xeon_store="$(dirname "$0")/../configs/openmp-intel-r-xeon-r-processor-2t.yaml"
stored=$(grep -o 'm: 12544, n: 64, k: 147, batch: 1, config: [a-z0-9_]*' "$xeon_store" | sed 's/.*config: //')
tile=$(echo "$stored" | sed 's/.*_tm\([0-9]*\)_tn\([0-9]*\)_.*/\1x\2/')
"$run" --space "$space" --shape 8x8x8 --reps 1 --config "$stored" > "$dir/tile" 2>&1 || true
if grep -qF "micro-tile $tile is not a compiled variant" "$dir/tile"; then
  succeeds "micro-tile $tile is not a compiled variant" "$run" --why-store "$xeon_store" --shape 12544x64x147 --format csv
else
  succeeds ",12544,64,147,$stored,exact entry,12544,64,147,1," "$run" --why-store "$xeon_store" --shape 12544x64x147 --format csv
fi
# Kokkos' flags reach Kokkos under their 4.x names whatever its version, in both tools.
status=0
"$run" --space "$space" --shape 8x8x8 --reps 1 --kokkos-num-threads=1 > "$dir/out" 2> "$dir/err" || status=$?
if [ "$status" != 0 ] || ! grep -q "(1 threads)" "$dir/out"; then
  echo "FAIL: kgemm-run --kokkos-num-threads=1 -> exit $status:"; head -n 5 "$dir/out" "$dir/err"; failures=$((failures + 1))
fi
"$autotune" --space "$space" --reps 1 --budget 1 --shape 8x8x8 --out "$dir/kokkos-flags.yaml" --kokkos-num-threads=1 \
  > "$dir/out" 2>&1 || { echo "FAIL: autotune refused --kokkos-num-threads=1:"; head -n 5 "$dir/out"; failures=$((failures + 1)); }

# --- Kokkos' own settings (issue 39): Kokkos 3.4 and 4.x abort (SIGABRT) or answer "stoi" on a bad
# thread count or device id; both tools check the flags and environment variables first and
# refuse them, naming the setting and the values it takes.
run8=("$run" --space "$space" --shape 8x8x8 --reps 1)
tune8=("$autotune" --space "$space" --reps 1 --budget 1 --shape 8x8x8 --out "$dir/kokkos.yaml")
for threads in 0 -1 abc 2147483648 0x4 4x ""; do
  for tool in run8 tune8; do
    declare -n command=$tool
    refused "option --kokkos-num-threads: '$threads' is not an integer from 1 to 2147483647" \
      "${command[@]}" "--kokkos-num-threads=$threads"
    refused "environment variable KOKKOS_NUM_THREADS: '$threads' is not an integer from 1 to 2147483647" \
      env KOKKOS_NUM_THREADS="$threads" "${command[@]}"
  done
done
for tool in run8 tune8; do
  declare -n command=$tool
  refused "'--kokkos-num-threads' is not --kokkos-num-threads=N with N an integer from 1" "${command[@]}" --kokkos-num-threads
  refused "option --kokkos-threads: '0' is not an integer from 1" "${command[@]}" --kokkos-threads=0
  refused "option --kokkos-device-id: '-1' is not an integer from 0 to 2147483647" "${command[@]}" --kokkos-device-id=-1
  refused "environment variable KOKKOS_DEVICE_ID: 'x' is not an integer from 0" env KOKKOS_DEVICE_ID=x "${command[@]}"
done
unset -n command
[ ! -e "$dir/kokkos.yaml" ] || fail "autotune refused Kokkos' settings but wrote its store"

# --- Numbers past their range (issue 39): the message states the values the option takes, never
# a bare "stoi", "stod" or a bound the value meets; and no option is silently ignored.
bounded=("${tune[@]}" --shape 8x8x8)
refused "bad budget '1e308s' (expected evaluations, a whole number from 1 to 2147483647, e.g. 40, or seconds, more than 0 and at most 31536000 (a year)" \
  "${bounded[@]}" --budget 1e308s
refused "bad budget '2147483648' (expected evaluations, a whole number from 1 to 2147483647" "${bounded[@]}" --budget 2147483648
refused "bad shard '2147483647/2147483648': the count n must be an integer from 1 to 2147483647" \
  "${bounded[@]}" --shard 2147483647/2147483648
refused "bad shard '3/3': the index i must be an integer from 0 to n-1 = 2" "${bounded[@]}" --shard 3/3
refused "bad shard '0x1/3': the index i must be an integer from 0 to n-1 = 2" "${bounded[@]}" --shard 0x1/3
refused "option --seed: '99999999999' is not an integer from" "${bounded[@]}" --seed 99999999999
refused "option --reps: '1e3' is not an integer from 1 to 2147483647" "$run" --space "$space" --reps 1e3
refused "option --image: '0x20' is not an integer from 1 to 2147483647" "${bounded[@]}" --image 0x20
refused "--shape gives the GEMMs itself; --shapes and --image apply to a model only" "${bounded[@]}" --image 32
refused "--shape gives the GEMMs itself; --shapes and --image apply to a model only" "${bounded[@]}" --shapes resnet18
printf 'gemm_f32_nn_m8_n8_k8_b1\tmb16_nb16_kb32_tm1_tn1_team1\t12abc\t\n' > "$dir/bad.tsv"
refused "$dir/bad.tsv:1: not a measurement line ('12abc' is neither a finite GFLOP/s >= 0 nor 'wrong')" \
  "${bounded[@]}" --replay "$dir/bad.tsv"
[ ! -e "$store" ] || fail "a refused run wrote $store"

# A store path that is a directory or a FIFO: the library warns and runs on its defaults.
mkfifo "$dir/fifo.yaml"
for file in "$dir" "$dir/fifo.yaml"; do
  status=0
  KGEMM_CONFIG_FILE=$file timeout 120 "$run" --space "$space" --model resnet18 --image 32 --reps 1 \
    > "$dir/out" 2> "$dir/err" || status=$?
  if [ "$status" != 0 ] || ! grep -q "not a regular file" "$dir/err" || ! grep -q "geometric mean" "$dir/out"; then
    echo "FAIL: KGEMM_CONFIG_FILE=$file -> exit $status; stderr:"; head -n 5 "$dir/err"; failures=$((failures + 1))
  fi
done

# Two runs on one store at once: the file ends with the entries of both.
"${tune[@]}" --budget 3 --shape 13x17x19,29x31x37 > "$dir/a.log" 2>&1 &
first=$!
"${tune[@]}" --budget 3 --shape 7x9x11,21x23x25,5x6x7 > "$dir/b.log" 2>&1 || { echo "FAIL: second concurrent run"; cat "$dir/b.log"; failures=$((failures + 1)); }
wait "$first" || { echo "FAIL: first concurrent run"; cat "$dir/a.log"; failures=$((failures + 1)); }
entries=$(grep -c 'kernel:' "$store" || true)
[ "$entries" = 5 ] || { echo "FAIL: concurrent runs left $entries entries, want 5"; cat "$store"; failures=$((failures + 1)); }
ls "$dir" | grep -q '\.tmp\.' && { echo "FAIL: a temporary store file was left behind"; failures=$((failures + 1)); }

# A store with a bad entry: autotune refuses to touch it (rewriting would drop the entry)...
cp "$store" "$dir/good.yaml"
sed -i '0,/gflops: [0-9.e+-]*/s//gflops: inf/' "$store"
cp "$store" "$dir/spoiled.yaml"
refused "is not a finite number > 0" "${tune[@]}" --shape 8x8x8
cmp -s "$store" "$dir/spoiled.yaml" || { echo "FAIL: autotune rewrote a store it refused"; failures=$((failures + 1)); }
# ...and --resume re-tunes an entry whose config cannot run here.
cp "$dir/good.yaml" "$store"
sed -i '0,/config: [a-z0-9_]*/s//config: mb64_nb64_kb32_tm4_tn4_team65536/' "$store"
"${tune[@]}" --budget 3 --shape 13x17x19,29x31x37,7x9x11,21x23x25,5x6x7 --resume > "$dir/resume.log" 2> "$dir/resume.err"
grep -q "cannot run here" "$dir/resume.err" || { echo "FAIL: --resume kept an illegal entry"; cat "$dir/resume.err"; failures=$((failures + 1)); }
grep -q "team65536" "$store" && { echo "FAIL: the illegal entry is still stored"; failures=$((failures + 1)); }
[ "$(grep -c 'kernel:' "$store")" = 5 ] || { echo "FAIL: --resume changed the entry count"; failures=$((failures + 1)); }

# --verify-store checks the store on its own space; tuning options would be silently ignored.
refused "--budget does not apply to --verify-store" "$autotune" --verify-store "$store" --budget 3
refused "--shard does not apply to --verify-store" "$autotune" --verify-store "$store" --shard 0/2
other=serial; [ "$space" = serial ] && other=openmp
refused "holds configs of the" "$autotune" --verify-store "$store" --space "$other"

[ "$failures" = 0 ] || { echo "$failures bad-input checks failed ($space)"; exit 1; }
echo "bad-input and concurrent-store checks passed ($space)"
