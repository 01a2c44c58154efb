#!/usr/bin/env bash
# The small SVD's GPU paths (src/backend/cuda/small_svd_cuda.c: the
# eigensolution, the deflated Gram path, the one-sided Jacobi path, gesvdj)
# on a GPU machine, in steps:
#   build     make all build/run_gpu_tests build/bench_small_svd build/bench_rsvd
#             (CUDA=1)
#   emulate   the Jacobi kernel's code run on the CPU against the C reference
#             (tests/jacobi_emulate.sh)
#   test      build/run_gpu_tests small_svd deep_decay deflate (the small SVD's
#             tests, gpu_rsvd_small_svd_paths_agree, the deflated path's
#             tests of test_gpu_small_svd_defl.c)
#   sanitize  compute-sanitizer memcheck, racecheck, synccheck on the small
#             refusal and planted-fault tests
#   bench     build/bench_small_svd: every path at l = 266, 512, 1024,
#             s_k / s_1 = 1e-7, 1e-9, 1e-3 (small_svd.csv)
#   rsvd      build/bench_rsvd, spectra exp, deep_decay, low_rank, with the
#             deflated path (rsvd_spectra.csv) and without it
#             (TCNLA_SMALL_SVD_DEFLATE=0: rsvd_spectra_nodefl.csv); t_svd is
#             the small SVD's step
# Logs and CSV under OUTDIR. Exit status: 1 when the build failed, else that
# of the GPU tests (0 without the step).
#   tests/gpu/small_svd_run.sh OUTDIR [steps, default build,emulate,test,sanitize,bench,rsvd]
set -u
OUT="${1:?usage: small_svd_run.sh OUTDIR [steps]}"
STEPS=",${2:-build,emulate,test,sanitize,bench,rsvd},"
has() { case "$STEPS" in *",$1,"*) return 0;; esac; return 1; }
mkdir -p "$OUT"
. tests/gpu/env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv >"$OUT/gpu.txt" 2>&1
if has build; then
  echo "== build"
  make -j16 CUDA=1 all build/run_gpu_tests build/bench_small_svd build/bench_rsvd \
    >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
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
  timeout 420 ./build/run_gpu_tests small_svd deep_decay deflate >"$OUT/tests.log" 2>&1
  trc=$?
  grep -E "^FAIL|^ok|^    |passed" "$OUT/tests.log" | head -80
  echo "tests rc=$trc"
fi
if has sanitize; then
  echo "== compute-sanitizer"
  san="$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)"
  for tool in memcheck racecheck synccheck; do
    timeout 200 "$san" --tool $tool --error-exitcode 99 ./build/run_gpu_tests \
      gpu_small_svd_jacobi_refusals gpu_small_svd_jacobi_planted gpu_small_svd_deflate_refusals \
      gpu_small_svd_deflate_gram_on_w \
      >"$OUT/sanitize_$tool.log" 2>&1
    echo "$tool rc=$? ($(grep -c -E "ERROR|Hazard|Race" "$OUT/sanitize_$tool.log") error lines)"
  done
fi
if has bench; then
  echo "== bench_small_svd"
  timeout 400 ./build/bench_small_svd --csv "$OUT/small_svd.csv" 2>&1 | tee "$OUT/bench.log"
fi
if has rsvd; then
  echo "== bench_rsvd by spectrum (t_svd: the small SVD's step)"
  V=shgemm_fp16+tcec_fp16_chol1,cusolver_gesvdr
  for S in exp deep_decay low_rank; do
    timeout 300 ./build/bench_rsvd --variants "$V" --spectrum "$S" --reps 3 \
      --csv "$OUT/rsvd_spectra.csv" >>"$OUT/rsvd.log" 2>&1; echo "$S rc=$?"
    TCNLA_SMALL_SVD_DEFLATE=0 timeout 300 ./build/bench_rsvd --variants "$V" --spectrum "$S" \
      --reps 3 --csv "$OUT/rsvd_spectra_nodefl.csv" >>"$OUT/rsvd_nodefl.log" 2>&1
    echo "$S (TCNLA_SMALL_SVD_DEFLATE=0) rc=$?"
  done
  for f in rsvd_spectra rsvd_spectra_nodefl; do
    echo "-- $f.csv"; cat "$OUT/$f.csv" 2>/dev/null
  done
fi
exit $trc
