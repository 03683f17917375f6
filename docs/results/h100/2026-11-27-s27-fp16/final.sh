export LD_LIBRARY_PATH=$PWD/.device/s27d/lib; .device/s27d/unpack.sh > /dev/null; X=.device/s27d/tools
STORE=$1; R=$OUT; . "$PWD/docs/results/h100/device_lib.sh"
(cd "$R" && "$OLDPWD/benchmarks/cublas_peer/build.sh" /tmp/cublas_peer) > "$R/cublas-build.log" 2>&1 &
$X/kgemm-run --space cuda --batch 128 --list-shapes > "$R/shapes.csv"
for round in 1 2; do KGEMM_CONFIG_FILE=$PWD/$STORE $X/kgemm-run --space cuda --batch 128 --dtype fp16 --format csv > "$R/kgemm-r$round.csv" 2>/dev/null; echo "kgemm r$round: $(geomean "$R/kgemm-r$round.csv")"; done
wait
timeout 150 /tmp/cublas_peer --shapes "$R/shapes.csv" --dtype fp16 --kgemm-inputs --out "$R/cublas.json" > "$R/cublas.log" 2>&1; echo "cublas rc=$?"; grep -h "geometric" "$R/cublas.log"
