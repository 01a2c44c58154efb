#!/usr/bin/env bash
# Every reproduction that needs the GPU, in one go (after `make CUDA=1 all bench`):
# [Ootomo & Yokota 2021] Fig. 8, [Ootomo & Yokota 2023] Fig. 7, [Baboulin et al. 2024] Fig. 2/3 (LRA over ranks),
# [Baboulin et al. 2024] Fig. 1 (GEMM and QR kernels), and the host-side ones: [Ootomo & Yokota 2023]
# Table 1 / Fig. 2 and [Ootomo & Yokota 2023] Fig. 3 (FP64 projections on the CPU, ~75 s on
# 2 cores). The benchmark programs
# (bench_gemm, bench_rsvd, bench_hosvd, bench_ozaki) give [Ootomo & Yokota 2021] Fig. 9,
# [Ootomo & Yokota 2023] Fig. 5/6/8/9 and [Mukunoki et al. 2020] Table 1; see bench/reproduce/README.md.
set -u
bash bench/reproduce/ootomo2023_table1_fig2.sh
bash bench/reproduce/ootomo2021_fig8.sh cuda
bash bench/reproduce/ootomo2023_fig7.sh cuda
bash bench/reproduce/baboulin2024_fig23.sh 16384 64 128 256 512
bash bench/reproduce/baboulin2024_fig1.sh cuda
bash bench/reproduce/ootomo2023_fig3.sh
bash bench/reproduce/mukunoki2020_fig34.sh
