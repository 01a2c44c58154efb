#!/usr/bin/env bash
# One GPU-machine session for the randomized algorithms, the command and the
# reproductions: build, make test-gpu, tcnla info / rsvd (the main job) on the
# GPU, bench/rsvd, bench/lra, bench/hosvd (each against its FP32 baseline in
# the same process) and bench/reproduce/seed002_fig8.sh. Logs and CSV under
# OUTDIR.   tests/gpu/session.sh OUTDIR [steps: test,demo,rsvd,lra,hosvd,fig8]
set -u
OUT="${1:?usage: session.sh OUTDIR [steps]}"
STEPS=",${2:-test,demo,rsvd,lra,hosvd,fig8},"
mkdir -p "$OUT"
. tests/gpu/env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv >"$OUT/gpu.txt" 2>&1
echo "== build"
make -j16 CUDA=1 all build/run_gpu_tests bench >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
grep -i -E "warning" "$OUT/build.log" | head
has() { case "$STEPS" in *",$1,"*) return 0;; esac; return 1; }
if has test; then
  echo "== make test-gpu"
  timeout 240 make CUDA=1 test-gpu >"$OUT/test-gpu.log" 2>&1
  echo "test-gpu rc=$?"
  grep -E "^FAIL|^    |passed" "$OUT/test-gpu.log" | head -60
fi
if has demo; then
  echo "== tcnla"
  ./build/tcnla info
  timeout 120 ./build/tcnla rsvd 2>&1 | tee "$OUT/rsvd.txt"
fi
has rsvd && { echo "== bench_rsvd"; timeout 300 ./build/bench_rsvd --csv "$OUT/rsvd.csv" 2>&1 | tee "$OUT/bench_rsvd.log"; }
has lra && { echo "== bench_lra"; timeout 300 ./build/bench_lra --csv "$OUT/lra.csv" 2>&1 | tee "$OUT/bench_lra.log"; }
has hosvd && { echo "== bench_hosvd"; timeout 300 ./build/bench_hosvd --csv "$OUT/hosvd.csv" 2>&1 | tee "$OUT/bench_hosvd.log"; }
if has fig8; then
  echo "== seed 002 Fig. 8"
  timeout 300 bash bench/reproduce/seed002_fig8.sh cuda >"$OUT/fig8.log" 2>&1; echo "fig8 rc=$?"
  cp bench/results/seed002_fig8.csv bench/results/seed002_fig8.png "$OUT/" 2>/dev/null
  tail -2 "$OUT/fig8.log"
fi
