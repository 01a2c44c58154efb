#!/usr/bin/env bash
# Every reproduction that needs the GPU, in one go (after `make CUDA=1 all bench`):
# seed 002 Fig. 8, seed 000 Fig. 7, seed 001 Fig. 2/3 (LRA over ranks),
# seed 001 Fig. 1 (GEMM and QR kernels), and the host-side ones: seed 000
# Table 1 / Fig. 2 and seed 000 Fig. 3 (FP64 projections on the CPU, ~75 s on
# 2 cores). The benchmark programs
# (bench_gemm, bench_rsvd, bench_hosvd, bench_ozaki) give seed 002 Fig. 9,
# seed 000 Fig. 5/6/8/9 and seed 004 Table 1; see bench/reproduce/README.md.
set -u
bash bench/reproduce/seed000_table1_fig2.sh
bash bench/reproduce/seed002_fig8.sh cuda
bash bench/reproduce/seed000_fig7.sh cuda
bash bench/reproduce/seed001_fig23.sh 16384 64 128 256 512
bash bench/reproduce/seed001_fig1.sh cuda
bash bench/reproduce/seed000_fig3.sh
bash bench/reproduce/seed004_fig34.sh
