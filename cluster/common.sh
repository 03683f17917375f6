# Sourced by the job scripts beside it: where the checkout, the builds and the outputs are,
# each overridable from the environment (sbatch passes the submitting shell's environment on).
#   KGEMM_ROOT        the kgemm checkout       (default: the folder sbatch was called from)
#   KGEMM_BUILD_DIR   the host build           (default: $KGEMM_ROOT/build/openmp)
#   KGEMM_CUDA_BUILD_DIR  the CUDA build       (default: $KGEMM_ROOT/build/cuda)
#   KGEMM_OUT_DIR     outputs: results/, stores/, logs/  (default: $KGEMM_ROOT/cluster-out)
#   KGEMM_SETUP       a file sourced first, e.g. the site's `module load` lines (default: none)
#   KGEMM_DRY_RUN=1   print the commands instead of running them
# Slurm copies a batch script into its spool directory before running it, so a job cannot find
# its checkout from its own path: the checkout is KGEMM_ROOT or the submitting directory.

if [ -n "${KGEMM_SETUP:-}" ]; then
  # shellcheck source=/dev/null
  source "$KGEMM_SETUP"
fi
KGEMM_BUILD_DIR=${KGEMM_BUILD_DIR:-$KGEMM_ROOT/build/openmp}
KGEMM_CUDA_BUILD_DIR=${KGEMM_CUDA_BUILD_DIR:-$KGEMM_ROOT/build/cuda}
KGEMM_OUT_DIR=${KGEMM_OUT_DIR:-$KGEMM_ROOT/cluster-out}
export KGEMM_ROOT KGEMM_BUILD_DIR KGEMM_CUDA_BUILD_DIR KGEMM_OUT_DIR

# Host spaces: as many OpenMP threads as the job has CPUs (the thread count is part of a host
# store's device fingerprint, so every shard of one tuning must get the same number).
if [ -z "${OMP_NUM_THREADS:-}" ] && [ -n "${SLURM_CPUS_PER_TASK:-${SLURM_CPUS_ON_NODE:-}}" ]; then
  export OMP_NUM_THREADS=${SLURM_CPUS_PER_TASK:-$SLURM_CPUS_ON_NODE}
fi

# kgemm_tool <build dir> <name>: the path of a built tool, or a message saying how to build it.
kgemm_tool() {
  local tool=$1/tools/$2
  if [ ! -x "$tool" ] && [ "${KGEMM_DRY_RUN:-0}" != 1 ]; then
    echo "kgemm: no $tool: build it first (cmake --preset <preset> && cmake --build $1 --target $2)," \
         "or point KGEMM_BUILD_DIR / KGEMM_CUDA_BUILD_DIR at a build" >&2
    return 1
  fi
  echo "$tool"
}

# show_command <command...>: "dry run: <command>", words quoted only where the shell needs it.
show_command() {
  local word line='dry run:'
  for word in "$@"; do
    if [[ $word =~ ^[][A-Za-z0-9_./:=,%@+-]+$ ]]; then line+=" $word"; else line+=" $(printf '%q' "$word")"; fi
  done
  echo "$line"
}

# run <command...>: runs it, or prints it with KGEMM_DRY_RUN=1.
run() {
  if [ "${KGEMM_DRY_RUN:-0}" = 1 ]; then show_command "$@"; else "$@"; fi
}

# words <text>: the text split at blanks into the array `words` (no glob expansion), for the
# argument lists passed in environment variables.
words() {
  read -r -a words <<< "$1"
}

# run_kgemm <build dir> <space> <result name>: kgemm-run on one space with $KGEMM_RUN_ARGS,
# its table in the job log and in $KGEMM_OUT_DIR/results/<result name>-<job id>.txt.
run_kgemm() {
  local tool result=$KGEMM_OUT_DIR/results/$3-${SLURM_JOB_ID:-local}.txt
  tool=$(kgemm_tool "$1" kgemm-run)
  words "${KGEMM_RUN_ARGS:---model resnet18 --image 224}"
  echo "kgemm: $(hostname -s), job ${SLURM_JOB_ID:-none}, $2, OMP_NUM_THREADS=${OMP_NUM_THREADS:-unset}," \
       "CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-unset}"
  if [ "${KGEMM_DRY_RUN:-0}" = 1 ]; then
    run "$tool" --space "$2" "${words[@]}"
    return
  fi
  "$tool" --space "$2" "${words[@]}" | tee "$result"
  echo "kgemm: result in $result"
}

[ "${KGEMM_DRY_RUN:-0}" = 1 ] || mkdir -p "$KGEMM_OUT_DIR/results" "$KGEMM_OUT_DIR/stores" "$KGEMM_OUT_DIR/logs"

# The build whose autotune tunes $KGEMM_SPACE (openmp by default; cuda: the CUDA build).
tuning_build_dir() {
  if [ "${KGEMM_SPACE:-openmp}" = cuda ]; then echo "$KGEMM_CUDA_BUILD_DIR"; else echo "$KGEMM_BUILD_DIR"; fi
}
