#!/usr/bin/env bash
# The cluster kit on a real Slurm: a single-node cluster on this machine (Debian's slurmctld,
# slurmd and munge, installed when missing; as root), all of it private to this test: its own
# munge key and socket, its own ports, state, spool and logs in a scratch folder. Submits the
# CPU job and the tuning array (2 shards, OpenMP, tiny shapes) with its merge job through
# cluster/submit.sh, waits for them, and checks the CPU job's table, each shard's store, and
# that the merged store is exactly their union. The GPU job goes through the same Slurm as a
# dry run on a stand-in GPU (a gres backed by /dev/null): Slurm must schedule its --gres=gpu:1
# and set CUDA_VISIBLE_DEVICES; kgemm-run is not run. Then an array whose tasks fail: its merge job
# never runs and the merged store stays as it was. Every daemon is stopped at the end, also on
# failure (they run in the foreground under this script; their PIDs are its children's).
# Usage: cluster_slurm.sh <build dir with tools/autotune and tools/kgemm-run>
set -euo pipefail
build=$(cd "$1" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
say() { echo "cluster.slurm: $*"; }
[ "$(id -u)" = 0 ] || { say "needs root (installs Debian's slurm and munge packages, runs the daemons as root)"; exit 1; }

if ! command -v slurmctld > /dev/null || ! command -v slurmd > /dev/null || ! command -v sbatch > /dev/null ||
   ! command -v munged > /dev/null; then
  say "installing slurmctld, slurmd, slurm-client and munge"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y --no-install-recommends slurmctld slurmd slurm-client munge > /tmp/cluster_slurm_apt.log 2>&1 ||
    { apt-get update > /dev/null && apt-get install -y --no-install-recommends slurmctld slurmd slurm-client munge \
        > /tmp/cluster_slurm_apt.log 2>&1; } || { say "apt-get install failed:"; tail -n 20 /tmp/cluster_slurm_apt.log; exit 1; }
fi

dir=$(mktemp -d /tmp/kgemm-slurm.XXXXXX)
chmod 755 "$dir"
daemons=()  # "name:pid"
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}
export SLURM_CONF=$dir/slurm.conf
stop_everything() {
  local status=$? entry pid
  if [ ${#daemons[@]} -gt 0 ] && command -v scancel > /dev/null; then
    scancel --quiet --user=root 2> /dev/null || true  # our cluster's jobs only (SLURM_CONF)
    for _ in $(seq 20); do [ -z "$(squeue -h 2> /dev/null)" ] && break; sleep 1; done
  fi
  for ((i = ${#daemons[@]} - 1; i >= 0; --i)); do  # slurmd, then slurmctld, then munged
    entry=${daemons[i]}
    pid=${entry#*:}
    kill "$pid" 2> /dev/null || true
    for _ in $(seq 20); do kill -0 "$pid" 2> /dev/null || break; sleep 0.5; done
    kill -9 "$pid" 2> /dev/null || true
    wait "$pid" 2> /dev/null || true
    say "stopped ${entry%%:*} (pid $pid)"
  done
  if [ "$status" != 0 ] || [ "$failures" != 0 ]; then
    for log in "$dir"/*.log; do [ -f "$log" ] && { echo "--- $log"; tail -n 15 "$log"; }; done
  fi
  rm -rf "$dir"
}
trap stop_everything EXIT
trap 'exit 130' INT TERM

# Two free TCP ports for slurmctld and slurmd (another cluster on this machine keeps its own).
read -r ctld_port slurmd_port < <(python3 -c '
import socket
socks = [socket.socket() for _ in range(2)]
for s in socks: s.bind(("", 0))
print(*[s.getsockname()[1] for s in socks])')

mkdir -p "$dir/munge" "$dir/state" "$dir/spool" "$dir/out"
dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
chmod 700 "$dir/munge"
chmod 400 "$dir/munge/munge.key"
munged -F --force --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.socket" \
  --pid-file="$dir/munge/munged.pid" --seed-file="$dir/munge/munge.seed" --log-file="$dir/munged.log" \
  > "$dir/munged.stdout.log" 2>&1 &
daemons+=("munged:$!")
for _ in $(seq 50); do [ -S "$dir/munge/munge.socket" ] && break; sleep 0.2; done
munge -n --socket="$dir/munge/munge.socket" | unmunge --socket="$dir/munge/munge.socket" > /dev/null ||
  { say "munge does not work"; exit 1; }

host=$(hostname -s)
node=$(slurmd -C | head -n 1)
memory=$(sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p' <<< "$node")
cat > "$SLURM_CONF" <<CONF
ClusterName=kgemmtest
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
GresTypes=gpu
${node%%RealMemory=*}RealMemory=$((memory * 9 / 10)) Gres=gpu:1
PartitionName=main Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
# A stand-in GPU (no device behind it): enough for Slurm to schedule the GPU job's --gres=gpu:1
# and set CUDA_VISIBLE_DEVICES; the job itself runs as a dry run.
echo "Name=gpu File=/dev/null" > "$dir/gres.conf"
slurmctld -D -c -f "$SLURM_CONF" > "$dir/slurmctld.stdout.log" 2>&1 &
daemons+=("slurmctld:$!")
slurmd -D -f "$SLURM_CONF" > "$dir/slurmd.stdout.log" 2>&1 &
daemons+=("slurmd:$!")
state=''
for _ in $(seq 60); do
  state=$(sinfo -h -N -o %t 2> /dev/null || true)
  [ "$state" = idle ] && break
  sleep 1
done
[ "$state" = idle ] || { say "the node is '$state', not idle, after 60 s"; exit 1; }
say "cluster up: $(sinfo -h -o '%P %D %t %c CPUs')"

# wait_for <job ids...>: until none is in the queue (10 minutes at most).
wait_for() {
  local ids
  ids=$(IFS=,; echo "$*")
  for _ in $(seq 600); do
    [ -z "$(squeue -h -j "$ids" 2> /dev/null)" ] && return 0
    if squeue -h -j "$ids" -o '%r' | grep -qE 'PartitionConfig|BadConstraints|Partition.*Limit'; then
      say "a job can never start here:"; squeue -j "$ids" -o '%i %j %T %r'
      return 1
    fi
    sleep 1
  done
  say "jobs $ids still queued after 10 minutes:"; squeue
  return 1
}
job() { sed -n "s/.*\b$1=\([0-9]*\).*/\1/p" "$dir/submit.log"; }

export KGEMM_ROOT=$root KGEMM_BUILD_DIR=$build KGEMM_OUT_DIR=$dir/out
export KGEMM_RUN_ARGS="--model resnet18 --image 32 --reps 1"
export KGEMM_TUNE_ARGS="--shape 8x8x8,16x16x16,24x8x8,32x16x8,40x8x8 --budget 3 --reps 2" KGEMM_TIME_LIMIT=5m
(cd "$dir" && "$root/cluster/submit.sh" --shards 2) > "$dir/submit.log" 2>&1 || { cat "$dir/submit.log"; exit 1; }
cpu=$(job cpu) array=$(job array) merge=$(job merge)
say "submitted: cpu job $cpu, tuning array $array, merge job $merge"
gpu=$(cd "$dir" && KGEMM_DRY_RUN=1 sbatch --parsable --cpus-per-task=1 --output="$dir/out/logs/%x-%j.out" "$root/cluster/gpu_job.sh")
say "submitted: gpu job $gpu (a dry run on the stand-in GPU)"
wait_for "$cpu" "$array" "$merge" "$gpu"

out=$dir/out
logs=$out/logs
grep -q "conv5_1.conv2" "$out/results/cpu-$cpu.txt" 2> /dev/null || fail "the CPU job left no table in $out/results/cpu-$cpu.txt"
grep -q "kgemm: result in" "$logs/kgemm-cpu-$cpu.out" 2> /dev/null || fail "the CPU job's log does not end with its result"
grep -q "CUDA_VISIBLE_DEVICES=0" "$logs/kgemm-gpu-$gpu.out" 2> /dev/null || fail "the GPU job was granted no GPU"
grep -q "dry run: .*/tools/kgemm-run --space cuda" "$logs/kgemm-gpu-$gpu.out" 2> /dev/null ||
  fail "the GPU job did not name kgemm-run --space cuda"
stores=$out/stores/$array
for i in 0 1; do
  grep -q "shard $i/2: " "$logs/kgemm-tune-${array}_$i.out" 2> /dev/null || fail "array task $i did not tune shard $i/2"
  [ "$(grep -c 'kernel:' "$stores/shard-$i.yaml" 2> /dev/null)" -ge 2 ] || fail "shard $i/2 stored fewer than 2 entries"
done
grep -q "merged 2 stores" "$logs/kgemm-merge-$merge.out" 2> /dev/null || fail "the merge job did not merge 2 stores"
merged=$out/stores/tuned.yaml
entries() { grep -o '{kernel: .*}' "$@" | sed 's/^[^{]*//' | sort; }
[ "$(entries "$merged" 2> /dev/null | wc -l)" = 5 ] || fail "the merged store holds $(entries "$merged" 2> /dev/null | wc -l) entries, want 5"
[ "$(entries "$merged")" = "$(entries "$stores/shard-0.yaml" "$stores/shard-1.yaml")" ] ||
  fail "the merged store is not the union of the shards' stores"

# An array whose tasks fail: afterok never holds, so the merge job is cancelled, not run.
cp "$merged" "$dir/merged.before"
export KGEMM_TUNE_ARGS="--shape 8x8x8 --budget 0"
(cd "$dir" && "$root/cluster/submit.sh" --shards 2 --no-cpu) > "$dir/submit.log" 2>&1 || { cat "$dir/submit.log"; exit 1; }
array=$(job array) merge=$(job merge)
wait_for "$array" "$merge"
grep -q "bad budget '0'" "$logs/kgemm-tune-${array}_0.out" || fail "the failing array task's log does not say why"
[ ! -e "$logs/kgemm-merge-$merge.out" ] || fail "the merge job ran after failed shards: $(cat "$logs/kgemm-merge-$merge.out")"
cmp -s "$merged" "$dir/merged.before" || fail "the merged store changed after a failed array"

[ "$failures" = 0 ] || { say "$failures checks failed"; exit 1; }
say "passed: CPU job, GPU job (dry run), 2-shard tuning array and merge on a single-node Slurm ($(sinfo -V))"
