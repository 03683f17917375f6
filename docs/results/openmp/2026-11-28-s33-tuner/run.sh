#!/usr/bin/env bash
# Session 33 on this repository's 2-core AMD EPYC (OpenMP, 2 threads, nothing else running), with
# today's host kernels (the 7 x 32 AVX-512 tile among them). Usage: run.sh MODE BUILD OUT_DIR [MODEL IMAGE]
#   exhaustive  every candidate of ResNet-50's batch-1 fp32 im2col GEMMs and of the six ResNet-18/34
#               shapes it lacks (an empty store), then the 16 fastest of each re-timed in 9 rounds
#               -> OUT_DIR/exhaustive-epyc.tsv
#   live        per problem of that cache, `autotune --budget 8` from a copy of the committed EPYC
#               store less the problem's own entry (the shape untuned, its neighbours tuned), the
#               choices gathered into one store, then `autotune retime --store` of it on a copy of the
#               cache: the 16 fastest and the climb's choice re-timed together in 9 rounds
#   image       (session 49) MODEL's batch-1 fp32 GEMMs at IMAGE x IMAGE, shapes the committed store
#               lacks: every candidate into an empty store (OUT_DIR/exhaustive-MODEL-IMAGE.yaml, the
#               store exhaustive search keeps), the 16 fastest of each re-timed in 9 rounds
#               (OUT_DIR/exhaustive-MODEL-IMAGE.tsv); then `autotune --budget 8` from a copy of the
#               committed EPYC store and `autotune retime --store` of its choices on a copy of the cache
set -euo pipefail
mode=${1:?exhaustive, live or image} build=${2:?build directory} out=${3:?output directory}
export OMP_PROC_BIND=spread OMP_PLACES=threads
autotune=("$build/tools/autotune" --kokkos-num-threads=2)
extras=196x256x1152,196x256x128,49x512x2304,49x512x256,784x128x576,784x128x64
if [ "$mode" = image ]; then
  model=${4:?model} image=${5:?image side}
  problem_set=(--shapes "$model" --image "$image" --batch 1 --dtype fp32)
  name="$out/exhaustive-$model-$image"
  rm -f "$name.yaml" "$name.tsv"
  "${autotune[@]}" --space openmp --strategy exhaustive --budget 1000000 "${problem_set[@]}" --out "$name.yaml" --cache "$name.tsv"
  "${autotune[@]}" retime --cache "$name.tsv" --rounds 9
  cp configs/openmp-amd-epyc-2t.yaml "$out/live-$model-$image.yaml"
  "${autotune[@]}" --space openmp "${problem_set[@]}" --budget 8 --out "$out/live-$model-$image.yaml" > "$out/live-$model-$image.log" 2>&1
  cp "$name.tsv" "$out/judged-$model-$image.tsv"
  "${autotune[@]}" retime --cache "$out/judged-$model-$image.tsv" --store "$out/live-$model-$image.yaml" --top 16 --rounds 9
elif [ "$mode" = exhaustive ]; then
  rm -f "$out/exhaustive-epyc.tsv"
  for set in "--shapes resnet50" "--shape $extras"; do
    rm -f "$out/empty.yaml"
    # shellcheck disable=SC2086
    "${autotune[@]}" --space openmp --strategy exhaustive --budget 1000000 $set --batch 1 \
        --dtype fp32 --out "$out/empty.yaml" --cache "$out/exhaustive-epyc.tsv"
  done
  rm -f "$out/empty.yaml"
  "${autotune[@]}" retime --cache "$out/exhaustive-epyc.tsv" --rounds 9
else
  rm -f "$out"/live-*.yaml "$out/live.yaml"
  for shape in $(grep '^#search' "$out/exhaustive-epyc.tsv" | sed -E 's/.*_m([0-9]+)_n([0-9]+)_k([0-9]+)_b1.*/\1x\2x\3/'); do
    IFS=x read -r m n k <<< "$shape"
    grep -v "m: $m, n: $n, k: $k, batch: 1," configs/openmp-amd-epyc-2t.yaml > "$out/live-$shape.yaml"
    "${autotune[@]}" --space openmp --shape "$shape" --batch 1 --dtype fp32 --budget 8 --out "$out/live-$shape.yaml" \
        > "$out/live-$shape.log" 2>&1
  done
  # The searches' own entries, under the committed store's header.
  sed '/^entries:/q' configs/openmp-amd-epyc-2t.yaml > "$out/live.yaml"
  for f in "$out"/live-*x*.yaml; do
    IFS=x read -r m n k <<< "$(basename "$f" .yaml | cut -d- -f2)"
    grep "m: $m, n: $n, k: $k, batch: 1," "$f" >> "$out/live.yaml"
  done
  cp "$out/exhaustive-epyc.tsv" "$out/exhaustive-live.tsv"
  "${autotune[@]}" retime --cache "$out/exhaustive-live.tsv" --store "$out/live.yaml" --rounds 9
fi
