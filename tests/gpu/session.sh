#!/usr/bin/env bash
# One GPU-machine session for the randomized algorithms and the command:
# build, make test-gpu, tcnla info / rsvd / lra / hosvd on the GPU, and
# bench/rsvd (cuSOLVER gesvdr, the FP32 pipeline and tcnla_rsvd on one
# matrix). Everything is logged under OUTDIR.
#   tests/gpu/session.sh OUTDIR
set -u
OUT="${1:?usage: session.sh OUTDIR}"
mkdir -p "$OUT"
. tests/gpu/env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv >"$OUT/gpu.txt" 2>&1
echo "== build"
make -j16 CUDA=1 all build/run_gpu_tests bench >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
grep -i -E "warning" "$OUT/build.log" | head
echo "== make test-gpu"
timeout 240 make CUDA=1 test-gpu >"$OUT/test-gpu.log" 2>&1
echo "test-gpu rc=$?"
grep -E "^FAIL|^    |passed" "$OUT/test-gpu.log" | head -60
echo "== tcnla"
./build/tcnla info
timeout 120 ./build/tcnla rsvd 2>&1 | tee "$OUT/rsvd.txt"
timeout 120 ./build/tcnla rsvd --json >"$OUT/rsvd.json" 2>&1
timeout 120 ./build/tcnla lra --m 8192 --n 8192 --rank 128 2>&1 | tee "$OUT/lra.txt"
timeout 120 ./build/tcnla hosvd --dims 384,384,384 --ranks 48,48,48 2>&1 | tee "$OUT/hosvd.txt"
echo "== bench_rsvd"
timeout 300 ./build/bench_rsvd --csv "$OUT/rsvd.csv" 2>&1 | tee "$OUT/bench_rsvd.log"
