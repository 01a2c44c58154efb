#!/usr/bin/env bash
# The small SVD's one-sided Jacobi path on a GPU machine, in steps:
#   build     make all build/run_gpu_tests build/bench_small_svd (CUDA=1)
#   emulate   the kernel's code run on the CPU against the C reference
#             (tests/jacobi_emulate.sh)
#   test      build/run_gpu_tests small_svd deep_decay (the Jacobi path's
#             tests and the older gpu_rsvd_small_svd_paths_agree)
#   sanitize  compute-sanitizer memcheck, racecheck, synccheck on the small
#             refusal and planted-fault tests
#   bench     build/bench_small_svd: eigen path, Jacobi path (with and
#             without the eigensolution) and gesvdj at l = 266, 512, 1024
# Logs and CSV under OUTDIR. Exit status: 1 when the build failed, else that
# of the GPU tests (0 without the step).
#   tests/gpu/small_svd_run.sh OUTDIR [steps, default build,emulate,test,sanitize,bench]
set -u
OUT="${1:?usage: small_svd_run.sh OUTDIR [steps]}"
STEPS=",${2:-build,emulate,test,sanitize,bench},"
has() { case "$STEPS" in *",$1,"*) return 0;; esac; return 1; }
mkdir -p "$OUT"
. tests/gpu/env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv >"$OUT/gpu.txt" 2>&1
if has build; then
  echo "== build"
  make -j16 CUDA=1 all build/run_gpu_tests build/bench_small_svd >"$OUT/build.log" 2>&1 ||
    { tail -30 "$OUT/build.log"; exit 1; }
  grep -i "warning" "$OUT/build.log" | head
fi
if has emulate; then
  echo "== the kernel's code emulated on the CPU"
  timeout 150 bash tests/jacobi_emulate.sh build >"$OUT/emulate.log" 2>&1; echo "emulate rc=$?"
  tail -3 "$OUT/emulate.log"
fi
trc=0
if has test; then
  echo "== GPU tests"
  timeout 300 ./build/run_gpu_tests small_svd deep_decay >"$OUT/tests.log" 2>&1
  trc=$?
  grep -E "^FAIL|^ok|^    |passed" "$OUT/tests.log" | head -60
  echo "tests rc=$trc"
fi
if has sanitize; then
  echo "== compute-sanitizer"
  san="$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)"
  for tool in memcheck racecheck synccheck; do
    timeout 150 "$san" --tool $tool --error-exitcode 99 ./build/run_gpu_tests \
      gpu_small_svd_jacobi_refusals gpu_small_svd_jacobi_planted >"$OUT/sanitize_$tool.log" 2>&1
    echo "$tool rc=$? ($(grep -c -E "ERROR|Hazard|Race" "$OUT/sanitize_$tool.log") error lines)"
  done
fi
if has bench; then
  echo "== bench_small_svd"
  timeout 400 ./build/bench_small_svd --csv "$OUT/small_svd.csv" 2>&1 | tee "$OUT/bench.log"
fi
exit $trc
