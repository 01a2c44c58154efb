#!/usr/bin/env bash
# The randomized SVD across five spectra on a GPU machine, cuSOLVER and
# torch.svd_lowrank beside tcnla in the same command: bench_rsvd at
# 16384^2, rank 256, p = 10, q = 2 (cusolver_gesvdr, the defaults,
# defaults_pass_efficient, fp16_chol1, fp16_pass_efficient) on exp,
# poly_slow, gap_noise, deep_decay and low_rank, then
# bench/python/rsvd_spectra.py through tests/gpu/python_run.sh (builds and
# installs the Python package). Under OUTDIR: rsvd_spectra_gesvdr.csv,
# bench_rsvd.log and the Python driver's files (rsvd_spectra_peers.csv).
# The plot: python3 bench/plot_rsvd_spectra.py OUTDIR/rsvd_spectra_gesvdr.csv
#   bench/rsvd_spectra_run.sh OUTDIR
set -u
OUT="${1:?usage: rsvd_spectra_run.sh OUTDIR}"
mkdir -p "$OUT"
. tests/gpu/env.sh
make -j16 CUDA=1 all build/bench_rsvd >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
rm -f "$OUT/rsvd_spectra_gesvdr.csv"
for S in exp poly_slow gap_noise deep_decay low_rank; do
  timeout 300 ./build/bench_rsvd --spectrum "$S" --reps 3 --csv "$OUT/rsvd_spectra_gesvdr.csv" \
    --variants cusolver_gesvdr,defaults,defaults_pass_efficient,fp16_chol1,fp16_pass_efficient 2>&1 | tee -a "$OUT/bench_rsvd.log"
done
bash tests/gpu/python_run.sh "$OUT" spectra
