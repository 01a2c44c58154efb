#!/usr/bin/env bash
# [Mukunoki et al. 2020] Fig. 3 (DP-mode accuracy against cuBLAS DGEMM as phi grows) and
# Fig. 4 (DP-mode throughput as n grows) on the GPU: build/bench_ozaki appends
# rows to bench/results/ozaki.csv (cuBLAS DGEMM, cuBLAS fixed-point emulation,
# OZAKI_FP16 / OZAKI_INT8 scheme 1 and OZAKI_INT8 scheme 2 in DP mode), then
# bench/plot_mukunoki2020.py draws bench/results/mukunoki2020_fig3.png and _fig4.png.
# Needs `make CUDA=1 all bench` and a GPU (about 5 minutes on an H200 with
# the default sizes; scheme 1 at 16384 is the slow part).
#   bash bench/reproduce/mukunoki2020_fig34.sh [sizes [phis]]
set -eu
sizes=${1:-4096,8192,16384}
phis=${2:-0.1,0.5,1,2}
./build/bench_ozaki --sizes "$sizes" --phis "$phis" --reps 3 \
  --methods cublas_dgemm,cublas_fixedpoint_emu,ozaki_fp16/DP,ozaki_int8/DP,ozaki_int8_crt/DP
python3 bench/plot_mukunoki2020.py
