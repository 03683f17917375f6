#!/usr/bin/env bash
# Output that cannot be written is a failure: with stdout on a full disk (/dev/full) or closed,
# every report of kgemm-run and autotune (tables, CSV, JSON, help, lists, --why-store, merge,
# --verify-store's verdicts) ends with exit status 1 and a message naming the output and why, as
# does a measurement cache on a full disk; a closed stdout never sends text into a store.
# Usage: tools_output.sh <autotune binary> <kgemm-run binary> <space>
set -euo pipefail
autotune=$1 run=$2 space=$3
# shellcheck source=support/checks.sh
source "$(dirname "$0")/support/checks.sh"

# unwritten <command...>: run with stdout on /dev/full, then closed; each must exit with status 1
# and say why the output was not written.
unwritten() {
  local status=0
  timeout 120 "$@" > /dev/full 2> "$dir/err" || status=$?
  if [ "$status" != 1 ] || ! grep -qF "cannot write the output: No space left on device" "$dir/err"; then
    fail "$* > /dev/full -> exit $status (want 1, naming the output and the full disk); stderr:"
    sed 's/^/  /' "$dir/err" | head -n 5
  fi
  status=0
  timeout 120 "$@" >&- 2> "$dir/err" || status=$?
  if [ "$status" != 1 ] || ! grep -qF "cannot write the output: standard output is closed" "$dir/err"; then
    fail "$* >&- -> exit $status (want 1, naming the closed output); stderr:"
    sed 's/^/  /' "$dir/err" | head -n 5
  fi
}

store=$dir/store.yaml
"$autotune" --space "$space" --budget 2 --reps 1 --shape 8x8x8 --out "$store" > "$dir/tune.log" 2>&1 ||
  { cat "$dir/tune.log"; exit 1; }
cp "$store" "$dir/tuned.yaml"

for format in table csv json; do
  unwritten "$run" --space "$space" --shape 8x8x8 --reps 1 --format "$format"
done
unwritten "$run" --help
unwritten "$run" --list-shapes --model resnet18
unwritten "$run" --why-store "$store" --shape 8x8x8
unwritten "$autotune" --help
unwritten "$autotune" merge --out "$dir/merged.yaml" "$store"
unwritten "$autotune" --verify-store "$store"
# autotune's table: a run whose report cannot be written stops before it tunes, the store untouched.
unwritten "$autotune" --space "$space" --budget 2 --reps 1 --shape 9x9x9 --out "$store"
cmp -s "$store" "$dir/tuned.yaml" || fail "autotune with an unwritable output changed its store"

refused "cannot write the measurement cache /dev/full: No space left on device" \
  "$autotune" --space "$space" --budget 2 --reps 1 --shape 8x8x8 --out "$dir/cached.yaml" --cache /dev/full

finish "unwritable-output ($space)"
