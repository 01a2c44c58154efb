#!/usr/bin/env bash
# The trust check and the Cholesky factorization of CholeskyQR on a GPU
# machine, in one run: build; the GPU tests of CholeskyQR, the
# orthonormalization, the randomized SVD and the trust check; the same bits
# as a reference revision (bench/fixed_costs_bits.cu built twice, with this
# tree's util.cu and cholqr_kernels.cu and with FC_BASE's, its output files
# compared byte for byte, both timed); bench_fixed_costs (CSV); bench_rsvd
# against cuSOLVER's gesvdr. Logs and CSV under OUTDIR (8 files). Exit
# status: 1 when the build failed, else the first non-zero of the tests and
# the bit comparison. Steps (default all; the build is kept between calls
# on one machine, so that the steps can go in two calls of 10 minutes):
#   bench/fixed_costs_run.sh OUTDIR [build,test,bits,bench,rsvd]
#   (OUTDIR defaults to $OUT); FC_BASE=<revision> (default d37e5ce): the
#   reference kernels of the bit comparison
set -u
OUTD="${1:-${OUT:?usage: fixed_costs_run.sh OUTDIR [steps]}}"
STEPS=",${2:-build,test,bits,bench,rsvd},"
BASE="${FC_BASE:-d37e5ce}"
has() { case "$STEPS" in *",$1,"*) return 0;; esac; return 1; }
mkdir -p "$OUTD"
. tests/gpu/env.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw \
  --format=csv >"$OUTD/gpu.txt" 2>&1

if has build; then
  echo "== build"
  make -j16 CUDA=1 all build/run_gpu_tests build/bench_fixed_costs build/bench_rsvd \
    >"$OUTD/build.log" 2>&1 || { tail -30 "$OUTD/build.log"; exit 1; }
  grep -i -E "warning" "$OUTD/build.log" | head
fi

trc=0
if has test; then
  echo "== GPU tests (orth, cholqr, potrf, rsvd, trust)"
  timeout 300 ./build/run_gpu_tests orth cholqr potrf rsvd trust >"$OUTD/tests.log" 2>&1
  trc=$?
  echo "tests rc=$trc"
  grep -E "^FAIL|passed" "$OUTD/tests.log" | head -40
fi

brc=0
if has bits; then
  echo "== the same bits as $BASE (bench/fixed_costs_bits.cu)"
  T=$(mktemp -d /tmp/fixed_costs.XXXXXX)
  F="-std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -Xcompiler -ffp-contract=off --fmad=true -DTCNLA_BUILDING"
  K=src/backend/cuda/kernels
  if git cat-file -e "$BASE^{commit}" 2>/dev/null && git archive "$BASE" include src | tar -x -C "$T"; then
    mkdir -p "$T/ref"
    mv "$T/include" "$T/src" "$T/ref/"
    nvcc $F -Iinclude -Isrc -o "$T/bits_new" bench/fixed_costs_bits.cu $K/util.cu $K/cholqr_kernels.cu &
    nvcc $F -I"$T/ref/include" -I"$T/ref/src" -o "$T/bits_ref" bench/fixed_costs_bits.cu \
      "$T/ref/$K/util.cu" "$T/ref/$K/cholqr_kernels.cu" &
    wait
    {
      echo "-- $BASE"
      "$T/bits_ref" "$T/ref.txt" && echo "-- this tree" && "$T/bits_new" "$T/new.txt"
      if [ $? -ne 0 ]; then echo "fixed_costs_bits: a run FAILED"; brc=1
      elif cmp "$T/ref.txt" "$T/new.txt"; then echo "fixed_costs_bits: SAME (flags, info, R, diag)"
      else echo "fixed_costs_bits: DIFFER"; diff "$T/ref.txt" "$T/new.txt" | head -20; brc=1; fi
    } >"$OUTD/bits.log" 2>&1
    cat "$OUTD/bits.log"
  else
    echo "revision $BASE not in this clone: comparison skipped" | tee "$OUTD/bits.log"
  fi
  rm -rf "$T"
fi

if has bench; then
  echo "== bench_fixed_costs"
  timeout 240 ./build/bench_fixed_costs --csv "$OUTD/fixed_costs.csv" --reps 20 \
    >"$OUTD/fixed_costs.log" 2>&1
  echo "bench_fixed_costs rc=$?"
  cat "$OUTD/fixed_costs.log"
fi

if has rsvd; then
  echo "== bench_rsvd"
  timeout 240 ./build/bench_rsvd --variants cusolver_gesvdr,shgemm_fp16+tcec_fp16_chol1 --reps 5 \
    --csv "$OUTD/rsvd.csv" >"$OUTD/rsvd.log" 2>&1
  echo "bench_rsvd rc=$?"
  tail -20 "$OUTD/rsvd.log"
fi

cat "$OUTD/gpu.txt"
[ "$trc" -ne 0 ] && { echo "fixed_costs_run: tests FAILED ($trc)"; exit "$trc"; }
[ "$brc" -ne 0 ] && { echo "fixed_costs_run: the bit comparison with $BASE FAILED (bits.log)"; exit 1; }
echo "fixed_costs_run: done (steps${STEPS%,}): no test failed, no bit differs"
exit 0
