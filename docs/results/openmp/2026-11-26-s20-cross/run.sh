#!/usr/bin/env bash
# host cross table: every gemm config of the Xeon store on every shape of it (OpenMP, 2 threads)
cd "$(dirname "$0")/../../../.." &&  O=${OUT:-/tmp/host-cross}; mkdir -p $O
# The Xeon store's shapes and its gemm configs.
S=49x512x2048,49x512x4608,49x2048x512,49x2048x1024,196x256x1024,196x256x2304,196x512x1024,196x1024x256,196x1024x512,784x128x512,784x128x1152,784x256x512,784x512x128,784x512x256,3136x64x64,3136x64x256,3136x64x576,3136x128x256,3136x256x64,6272x512x4608,6272x2048x512,6272x2048x1024,12544x64x147,25088x256x1024,25088x256x2304,25088x512x1024,25088x1024x256,25088x1024x512,100352x128x512,100352x128x1152,100352x256x512,100352x512x128,100352x512x256,401408x64x64,401408x64x256,401408x64x576,401408x128x256,401408x256x64,1605632x64x147
configs="mb120_nb128_kb128_tm12_tn32_team1
mb120_nb128_kb256_tm12_tn32_team1
mb120_nb128_kb512_tm12_tn32_team1
mb120_nb256_kb128_tm12_tn32_team1
mb120_nb256_kb128_tm8_tn32_team1
mb120_nb256_kb256_tm12_tn32_team1
mb48_nb128_kb256_tm12_tn32_team1
mb48_nb128_kb512_tm12_tn32_team1
mb48_nb64_kb128_tm12_tn32_team1
mb48_nb64_kb256_tm12_tn32_team1
mb60_nb256_kb128_tm12_tn32_team1
mb60_nb256_kb256_tm12_tn32_team1
mb60_nb32_kb256_tm12_tn32_team1
mb60_nb32_kb64_tm12_tn32_team1
mb60_nb64_kb128_tm12_tn32_team1
mb60_nb64_kb256_tm12_tn32_team1
mb64_nb64_kb256_tm8_tn32_team1
mb96_nb64_kb256_tm12_tn32_team1"
for c in $configs; do
  t0=$(date +%s)
  build/openmp/tools/kgemm-run --space openmp --shape $S --config $c --reps 3 --format csv > $O/$c.csv 2> $O/$c.err
  echo "$c rc=$? $(( $(date +%s) - t0 )) s load $(cut -d' ' -f1 /proc/loadavg)"
done
