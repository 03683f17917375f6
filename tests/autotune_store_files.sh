#!/usr/bin/env bash
# The store file end to end (docs/tuning.md, "The store file: guarantees"): autotune and merge
# rewrite a store through a link and keep its mode; a held lock is waited for with one message
# naming its holder, and --lock-timeout gives up naming it, before anything is tuned; another
# user can take the lock of a store in a shared directory; leftovers of interrupted saves go.
# Usage: autotune_store_files.sh <autotune binary> <space>
set -euo pipefail
autotune=$1 space=$2
# shellcheck source=support/checks.sh
source "$(dirname "$0")/support/checks.sh"
export KOKKOS_NUM_THREADS=1  # one device fingerprint for every run, whatever the machine
tune=("$autotune" --space "$space" --reps 2 --budget 3)
entries() { grep -c 'kernel:' "$1" || true; }
"${tune[@]}" --shape 8x8x8 --out "$dir/a.yaml" > /dev/null 2>&1 || fail "tuning a.yaml"
"${tune[@]}" --shape 16x8x8 --out "$dir/b.yaml" > /dev/null 2>&1 || fail "tuning b.yaml"

# Links: the link stays and its target gets the entries; the lock sits beside the target.
mkdir "$dir/real"
cp "$dir/a.yaml" "$dir/real/store.yaml"
ln -s real/store.yaml "$dir/link.yaml"
succeeds "1 added" "$autotune" merge --out "$dir/link.yaml" "$dir/b.yaml"
[ -L "$dir/link.yaml" ] || fail "merge replaced the link $dir/link.yaml by a file"
[ "$(entries "$dir/real/store.yaml")" = 2 ] || fail "the link's target holds $(entries "$dir/real/store.yaml") entries, want 2"
[ -e "$dir/real/store.yaml.lock" ] && [ ! -e "$dir/link.yaml.lock" ] || fail "the lock is not beside the link's target"
succeeds "store: $dir/link.yaml (3 entries)" "${tune[@]}" --shape 24x8x8 --out "$dir/link.yaml"
[ -L "$dir/link.yaml" ] && [ "$(entries "$dir/real/store.yaml")" = 3 ] || fail "autotune did not write through the link"
ln -s real/absent.yaml "$dir/dangling.yaml"
refused "dangling.yaml: is a symbolic link to real/absent.yaml, which does not exist" "${tune[@]}" --shape 8x8x8 --out "$dir/dangling.yaml"
[ -L "$dir/dangling.yaml" ] && [ ! -e "$dir/real/absent.yaml" ] || fail "a dangling link was replaced or followed"

# Modes: a private or group-shared store keeps its mode through autotune and merge.
for mode in 600 640 664; do
  cp "$dir/a.yaml" "$dir/m$mode.yaml"
  chmod "$mode" "$dir/m$mode.yaml"
  succeeds "1 added" "$autotune" merge --out "$dir/m$mode.yaml" "$dir/b.yaml"
  succeeds "store: $dir/m$mode.yaml" "${tune[@]}" --shape 24x8x8 --out "$dir/m$mode.yaml"
  [ "$(stat -c %a "$dir/m$mode.yaml")" = "$mode" ] || fail "a store of mode $mode came back $(stat -c %a "$dir/m$mode.yaml")"
  [ "$(stat -c %a "$dir/m$mode.yaml.lock")" = "$mode" ] || fail "the lock of a store of mode $mode has $(stat -c %a "$dir/m$mode.yaml.lock")"
done

# Leftovers of interrupted saves go when the store is next rewritten; look-alikes stay.
echo "half a store" > "$dir/a.yaml.tmp.Q1w2E3"
echo "not a leftover" > "$dir/a.yaml.tmp.notours"
succeeds "merged" "$autotune" merge --out "$dir/a.yaml" "$dir/b.yaml"
[ ! -e "$dir/a.yaml.tmp.Q1w2E3" ] || fail "a leftover temporary file was not removed"
[ -e "$dir/a.yaml.tmp.notours" ] || fail "a file that is no leftover was removed"

# A held lock: one message naming the holder, then, with --lock-timeout, an error naming it,
# before any shape is tuned; without, the run goes on once the lock is free.
held=$dir/held.yaml
cp "$dir/a.yaml" "$held"
echo "pid 4242 on host elsewhere: autotune --space $space (stopped)" > "$held.lock"
flock -o "$held.lock" sh -c 'while [ ! -e "$1" ]; do sleep 0.1; done' _ "$dir/release" > /dev/null 2>&1 &
holder=$!
for _ in $(seq 100); do flock -n "$held.lock" true || break; sleep 0.1; done
flock -n "$held.lock" true && fail "the test's holder did not take the lock"
start=$SECONDS
refused "its lock $held.lock is still held after 1 s, by pid 4242 on host elsewhere" \
  "${tune[@]}" --shape 8x8x8 --out "$held" --lock-timeout 1
grep -q "waiting for its lock $held.lock, held by pid 4242 on host elsewhere: autotune --space $space (stopped) (giving up after 1 s)" "$dir/err" ||
  fail "no message naming the holder while waiting: $(cat "$dir/err")"
grep -q '^\[1/1\]' "$dir/err" && fail "autotune tuned a shape before finding the lock held"
refused "is still held after 0 s, by pid 4242" "$autotune" merge --out "$held" --lock-timeout 0 "$dir/b.yaml"
grep -q "waiting for its lock" "$dir/err" && fail "merge --lock-timeout 0 said it waits"
[ $((SECONDS - start)) -lt 30 ] || fail "the timeouts took $((SECONDS - start)) s"
refused "option --lock-timeout: 'soon' is not a number of seconds" "${tune[@]}" --shape 8x8x8 --out "$held" --lock-timeout soon
refused "option --lock-timeout: '-1' is not a number of seconds" "$autotune" merge --out "$held" --lock-timeout=-1 "$dir/b.yaml"
"$autotune" merge --out "$held" "$dir/b.yaml" > "$dir/wait.out" 2> "$dir/wait.err" &
waiter=$!
for _ in $(seq 100); do grep -q "waiting for its lock" "$dir/wait.err" && break; sleep 0.1; done
grep -q "held by pid 4242 on host elsewhere.*(no time limit)" "$dir/wait.err" || fail "merge waits without saying so: $(cat "$dir/wait.err")"
touch "$dir/release"
wait "$holder" || fail "the test's lock holder failed"
status=0
wait "$waiter" || status=$?
[ "$status" = 0 ] && grep -q "merged" "$dir/wait.out" || fail "merge did not finish once the lock was free (exit $status): $(cat "$dir/wait.err")"
[ "$(grep -c "waiting for its lock" "$dir/wait.err")" = 1 ] || fail "the wait was announced more than once"

# Another user: a group- and world-writable store in a shared directory, its lock created by
# root, is rewritten by nobody (its lock takes the store's mode); and a lock file nobody may
# not write (left by an older kgemm) still serves, opened read-only.
if [ "$(id -u)" = 0 ]; then
  shared=$dir/shared
  mkdir -m 0777 "$shared"
  chmod 0755 "$dir"
  cp "$dir/a.yaml" "$shared/store.yaml"
  cp "$dir/b.yaml" "$shared/b.yaml"
  "${tune[@]}" --shape 32x8x8 --out "$shared/c.yaml" > /dev/null 2>&1 || fail "tuning c.yaml"
  chmod 0666 "$shared/store.yaml"
  chmod 0644 "$shared/b.yaml" "$shared/c.yaml"
  succeeds "merged" "$autotune" merge --out "$shared/store.yaml" "$shared/b.yaml"
  [ "$(stat -c %a "$shared/store.yaml.lock")" = 666 ] || fail "root's lock of a 0666 store has mode $(stat -c %a "$shared/store.yaml.lock")"
  as_nobody=(setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups)
  succeeds "1 added" "${as_nobody[@]}" "$autotune" merge --out "$shared/store.yaml" "$shared/c.yaml"
  chmod 0644 "$shared/store.yaml.lock"
  succeeds "merged" "${as_nobody[@]}" "$autotune" merge --out "$shared/store.yaml" "$shared/b.yaml"
  [ "$(entries "$shared/store.yaml")" = 3 ] || fail "the shared store holds $(entries "$shared/store.yaml") entries, want 3"
  [ "$(stat -c %a "$shared/store.yaml")" = 666 ] || fail "nobody's rewrite left mode $(stat -c %a "$shared/store.yaml")"
  # A directory nobody may not write: refused before anything is tuned.
  mkdir -m 0755 "$shared/root-only"
  refused "cannot create a temporary file beside it" "${as_nobody[@]}" "${tune[@]}" --shape 8x8x8 --out "$shared/root-only/store.yaml"
  grep -q "Permission denied" "$dir/err" || fail "the refusal does not say why: $(cat "$dir/err")"
else
  echo "skipped: another user's turn at a shared store's lock (needs root to run as nobody)"
fi

finish "store file ($space)"
