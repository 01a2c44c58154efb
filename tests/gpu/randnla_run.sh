#!/usr/bin/env bash
# The randomized algorithms, the command and the reproductions on a GPU
# machine: build, make test-gpu, tcnla info / rsvd (the main job) on the
# GPU, bench/rsvd, bench/lra, bench/hosvd (each against its FP32 baseline in
# the same process), bench/reproduce/ootomo2021_fig8.sh and
# ootomo2023_fig7.sh. Logs and CSV under OUTDIR. Exit status: 1 when the
# build failed, else that of the GPU tests (step test; 0 without it).
#   tests/gpu/randnla_run.sh OUTDIR [steps: test,demo,rsvd,lra,hosvd,fig8,fig7]
set -u
OUT="${1:?usage: randnla_run.sh OUTDIR [steps]}"
STEPS=",${2:-test,demo,rsvd,lra,hosvd,fig8,fig7},"
mkdir -p "$OUT"
. tests/gpu/env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv >"$OUT/gpu.txt" 2>&1
echo "== build"
make -j16 CUDA=1 all build/run_gpu_tests bench >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
grep -i -E "warning" "$OUT/build.log" | head
trc=0
has() { case "$STEPS" in *",$1,"*) return 0;; esac; return 1; }
if has test; then
  echo "== make test-gpu"
  timeout 240 make CUDA=1 GPU_SAN=0 test-gpu >"$OUT/test-gpu.log" 2>&1
  trc=$?
  echo "test-gpu rc=$trc"
  grep -E "^FAIL|^    |passed" "$OUT/test-gpu.log" | head -60
fi
if has demo; then
  echo "== tcnla"
  ./build/tcnla info
  timeout 120 ./build/tcnla rsvd 2>&1 | tee "$OUT/rsvd.txt"
fi
has rsvd && { echo "== bench_rsvd"; timeout 300 ./build/bench_rsvd --csv bench/results/rsvd.csv.new 2>&1 | tee "$OUT/bench_rsvd.log"; }
has hosvd && { echo "== bench_hosvd"; timeout 300 ./build/bench_hosvd --csv bench/results/hosvd.csv.new 2>&1 | tee "$OUT/bench_hosvd.log"; }
has lra && { echo "== [Baboulin et al. 2024] Fig. 2/3 (bench_lra over ranks)"; timeout 400 bash bench/reproduce/baboulin2024_fig23.sh 16384 64 128 256 512 2>&1 | tee "$OUT/bench_lra.log" | grep -E "bench_lra on|tgemm16_32\+refine|fp32_householder"; }
if has fig8; then
  echo "== [Ootomo & Yokota 2021] Fig. 8"
  timeout 300 bash bench/reproduce/ootomo2021_fig8.sh cuda >"$OUT/fig8.log" 2>&1; echo "fig8 rc=$?"
fi
if has fig7; then
  echo "== [Ootomo & Yokota 2023] Fig. 7"
  timeout 300 bash bench/reproduce/ootomo2023_fig7.sh cuda >"$OUT/fig7.log" 2>&1; echo "fig7 rc=$?"
fi
# everything produced, in one archive (the tool returns few files)
tar czf "$OUT/results.tgz" bench/results "$OUT"/*.log 2>/dev/null
ls -la "$OUT"
exit $trc
