#!/usr/bin/env bash
# Tunes on all GPUs of one node at once: one autotune process per GPU, each tuning its part of
# the problem list into its own store, then one merged store (autotune merge).
# Usage: cluster/tune_node.sh --out FILE [--space cuda|openmp|serial] [--processes N]
#                             [--threads T] [--split claim|shard] [--autotune PATH]
#                             [-- autotune options...]
#   cuda (default): N = the GPUs this process may use (CUDA_VISIBLE_DEVICES, as Slurm's
#     --gres sets it, else nvidia-smi -L); process i sees only the i-th of them, which Kokkos
#     takes as its device 0 (the same with every Kokkos version, unlike --kokkos-device-id).
#   openmp, serial: N processes (--processes is required), each with T threads
#     (KOKKOS_NUM_THREADS; default: cores / N) pinned to T cores of its own (taskset).
#   --split claim (default): each process takes the next problem nobody has claimed (autotune
#     --claim), so all end about together; shard: process i takes shard i/N (autotune --shard),
#     fixed beforehand.
#   --autotune: default build/openmp/tools/autotune, or build/cuda/... for cuda.
# Each process's store and log go to <FILE without .yaml>.node/; the launcher prints each
# process's wall time and the whole run's. Exit status 1 when a process failed (its log is
# named; the stores of the others are merged all the same).
# Example, a 4-GPU node: cluster/tune_node.sh --out h100.yaml -- --shapes resnet50 --batch 1,128
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out='' space=cuda processes='' threads='' autotune='' split=claim

fail() {
  echo "tune_node: $*" >&2
  exit 1
}
count_option() {  # count_option <name> <value>: the value, when a whole number >= 1
  [[ $2 =~ ^[1-9][0-9]{0,5}$ ]] || fail "$1 '$2' is not a whole number from 1 to 999999"
  echo "$2"
}
while [ $# -gt 0 ]; do
  case $1 in
    --out|--space|--processes|--threads|--split|--autotune)
      [ $# -ge 2 ] || fail "$1 needs a value"
      case $1 in
        --out) out=$2 ;;
        --space) space=$2 ;;
        --processes) processes=$(count_option "$1" "$2") ;;
        --threads) threads=$(count_option "$1" "$2") ;;
        --split) split=$2 ;;
        --autotune) autotune=$2 ;;
      esac
      shift ;;
    --) shift; break ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) fail "unknown argument '$1' (autotune's own options go after --; see --help)" ;;
  esac
  shift
done
tune_args=("$@")
[ -n "$out" ] || fail "--out FILE is required (the merged store)"
case $split in
  claim|shard) ;;
  *) fail "--split '$split' is not claim or shard" ;;
esac
case $space in
  cuda) build=cuda ;;
  openmp|serial) build=openmp ;;
  *) fail "--space '$space' is not cuda, openmp or serial" ;;
esac
autotune=${autotune:-$root/build/$build/tools/autotune}
[ -x "$autotune" ] || fail "no autotune at $autotune: build it, or name it with --autotune"

# The CPUs this process may run on ("0-3,8-11" in /proc/self/status), one id per element.
allowed_cpus() {
  local list range
  list=$(awk '/^Cpus_allowed_list:/ { print $2 }' /proc/self/status)
  IFS=, read -r -a ranges <<< "$list"
  for range in "${ranges[@]}"; do
    if [[ $range == *-* ]]; then seq "${range%-*}" "${range#*-}"; else echo "$range"; fi
  done
}

declare -a env_of  # per process: its environment and pinning, as `env` words
if [ "$space" = cuda ]; then
  if [ -n "${CUDA_VISIBLE_DEVICES:-}" ]; then
    IFS=, read -r -a gpus <<< "$CUDA_VISIBLE_DEVICES"
  else
    command -v nvidia-smi > /dev/null || fail "no CUDA_VISIBLE_DEVICES and no nvidia-smi: cannot tell the GPUs"
    mapfile -t gpus < <(nvidia-smi -L | awk '/^GPU [0-9]+:/ { sub(":", "", $2); print $2 }')
  fi
  [ ${#gpus[@]} -ge 1 ] || fail "no GPU visible"
  processes=${processes:-${#gpus[@]}}
  [ "$processes" -le ${#gpus[@]} ] || fail "--processes $processes, but only ${#gpus[@]} GPUs are visible (${gpus[*]})"
  for ((i = 0; i < processes; ++i)); do env_of[i]="CUDA_VISIBLE_DEVICES=${gpus[i]}"; done
else
  [ -n "$processes" ] || fail "--processes N is required for $space (one process per GPU applies to cuda only)"
  mapfile -t cpus < <(allowed_cpus)
  threads=${threads:-$((${#cpus[@]} / processes))}
  [ "$threads" -ge 1 ] || fail "$processes processes on ${#cpus[@]} cores: give each --threads 1 at least"
  [ $((processes * threads)) -le ${#cpus[@]} ] ||
    echo "tune_node: warning: $processes x $threads threads on ${#cpus[@]} cores: the processes disturb each other's timings" >&2
  for ((i = 0; i < processes; ++i)); do
    mine=()
    for ((t = 0; t < threads; ++t)); do mine+=("${cpus[(i * threads + t) % ${#cpus[@]}]}"); done
    pin=$(IFS=,; echo "${mine[*]}")
    env_of[i]="KOKKOS_NUM_THREADS=$threads OMP_NUM_THREADS=$threads taskset -c $pin"
  done
fi

work=${out%.yaml}.node
mkdir -p "$work"
rm -rf "$work/claims"  # an earlier run's claims would keep their problems from this one
pids=()
stop_all() {
  for pid in "${pids[@]}"; do kill "$pid" 2> /dev/null || true; done
}
trap 'stop_all; exit 130' INT TERM
echo "tune_node: $processes processes ($space, split by $split), their stores and logs in $work/"
started=$(date +%s.%N)
for ((i = 0; i < processes; ++i)); do
  rm -f "$work/process-$i.yaml"  # this script's own output of an earlier run: a store of this run only
  read -r -a prefix <<< "${env_of[i]}"
  if [ "$split" = claim ]; then part=(--claim "$work/claims"); else part=(--shard "$i/$processes"); fi
  env "${prefix[@]}" "$autotune" --space "$space" "${part[@]}" --out "$work/process-$i.yaml" \
    "${tune_args[@]}" > "$work/process-$i.log" 2>&1 &
  pids+=($!)
  echo "tune_node: process $i/$processes: pid ${pids[i]}, ${env_of[i]}, ${part[*]}"
done
stores=() failed=()
for ((i = 0; i < processes; ++i)); do
  status=0
  wait "${pids[i]}" || status=$?
  if [ "$status" = 0 ]; then
    stores+=("$work/process-$i.yaml")
    echo "tune_node: process $i/$processes: $(grep -m1 '^wall time: ' "$work/process-$i.log" || echo 'no wall time in its log')"
  else
    failed+=("$i")
    echo "tune_node: process $i/$processes failed (exit $status); its log, $work/process-$i.log, ends:" >&2
    tail -n 5 "$work/process-$i.log" | sed 's/^/  /' >&2
  fi
done
trap - INT TERM
echo "tune_node: all processes ended, wall time $(awk -v a="$started" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s"
[ ${#stores[@]} -eq 0 ] || "$autotune" merge --out "$out" "${stores[@]}"
[ ${#failed[@]} -eq 0 ] ||
  fail "${#failed[@]} of $processes processes failed (${failed[*]}); autotune --resume --out $out with the same options tunes what is missing"
