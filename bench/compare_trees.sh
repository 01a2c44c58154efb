#!/usr/bin/env bash
# The speed of this tree against another build of tcnla, measured in one run
# on one GPU: bench_gemm at 8192^3 and 16384 x 512 x 16384 (or the shapes
# of $TN_GEMM_SHAPES, in its --shapes syntax) (TCEC_FP16,
# TCEC_TF32, SHGEMM_FP16, SHGEMM_TF32, cuBLAS SGEMM beside them) and
# bench_rsvd's defaults and fastest variants (cuSOLVER gesvdr beside them),
# the two trees alternating ROUNDS times so that clock and thermal drift hit
# both alike.
#   bench/compare_trees.sh REF.tar.gz OUT [ROUNDS]
# REF.tar.gz is a source tree (git archive of the reference commit); it is
# built under build/ref. CSV: OUT/gemm_{new,ref}.csv, OUT/rsvd_{new,ref}.csv;
# the logs beside them.
set -u
REF="${1:?usage: compare_trees.sh REF.tar.gz OUT [ROUNDS]}"
OUT="${2:?usage: compare_trees.sh REF.tar.gz OUT [ROUNDS]}"
ROUNDS="${3:-2}"
mkdir -p "$OUT" build/ref
OUT=$(cd "$OUT" && pwd)
. tests/gpu/env.sh
if [ ! -x build/ref/build/bench_rsvd ]; then
  tar xzf "$REF" -C build/ref
  (cd build/ref && make -j8 CUDA=1 build/bench_gemm build/bench_rsvd >"$OUT/build_ref.log" 2>&1) &
fi
make -j8 CUDA=1 build/bench_gemm build/bench_rsvd >"$OUT/build_new.log" 2>&1 || {
  tail -20 "$OUT/build_new.log"; exit 1; }
wait
[ -x build/ref/build/bench_rsvd ] || { tail -20 "$OUT/build_ref.log"; exit 1; }
G=(--shapes "${TN_GEMM_SHAPES:-8192,16384x512x16384}" --methods cublas_sgemm,tcec_fp16,tcec_tf32,shgemm_fp16,shgemm_tf32)
V=cusolver_gesvdr,shgemm_fp16+tcec_fp16_chol1,fp16_chol1
for r in $(seq "$ROUNDS"); do
  for t in new ref; do
    d=.; [ $t = ref ] && d=build/ref
    (cd "$d" && ./build/bench_gemm "${G[@]}" --out "$OUT/gemm_$t.csv") \
      >>"$OUT/gemm_$t.log" 2>&1 || echo "bench_gemm $t failed"
    (cd "$d" && ./build/bench_rsvd --variants "$V" --reps 5 --csv "$OUT/rsvd_$t.csv") \
      >>"$OUT/rsvd_$t.log" 2>&1 || echo "bench_rsvd $t failed"
  done
done
echo "== gemm (TFLOP/s)"
for t in new ref; do echo "-- $t"; grep -E "tcec|shgemm|cublas" "$OUT/gemm_$t.log" | head -40; done
echo "== rsvd"
for t in new ref; do echo "-- $t"; grep -E "gesvdr|chol1" "$OUT/rsvd_$t.log" | head -20; done
