# Sourced by the shell tests: a scratch folder $dir removed on exit, and checks that print
# "FAIL: ..." and count, so one run reports every failure; `finish` turns the count into the
# exit status.
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
failures=0

fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# refused <fragment> <command...>: exit status 1 and the fragment in stderr (within 2 minutes).
refused() {
  local fragment=$1 status=0
  shift
  timeout 120 "$@" > "$dir/out" 2> "$dir/err" || status=$?
  if [ "$status" != 1 ] || ! grep -qF -- "$fragment" "$dir/err"; then
    fail "$* -> exit $status (want 1 with '$fragment'); stderr:"
    sed 's/^/  /' "$dir/err" | head -n 5
  fi
}

# succeeds <fragment> <command...>: exit status 0 and the fragment in stdout or stderr.
succeeds() {
  local fragment=$1 status=0
  shift
  timeout 120 "$@" > "$dir/out" 2>&1 || status=$?
  if [ "$status" != 0 ] || ! grep -qF -- "$fragment" "$dir/out"; then
    fail "$* -> exit $status (want 0 with '$fragment'); output:"
    sed 's/^/  /' "$dir/out" | head -n 5
  fi
}

# finish <what was checked>: the summary, and exit status 1 when a check failed.
finish() {
  if [ "$failures" != 0 ]; then
    echo "$failures $1 checks failed"
    exit 1
  fi
  echo "$1 checks passed"
}
