#!/usr/bin/env bash
# [Baboulin et al. 2024] Fig. 1: the GEMM and QR kernels of randomized LRA alone (bench/kernels.c).
# (a) C = A B, A m x n (m = n = 35840, as the paper), B n x k, k = 8 ... 1024:
#     cuBLAS SGEMM (NATIVE_FP32) and the tgemm variants as tcnla_lra runs them
#     (32|32; 16|32 and 16|16 with and without the explicit FP16 conversion), and
#     cuBLAS GEMM on FP16 storage for comparison;
# (b) orthonormalization of an n x k Gaussian matrix: Householder (cuSOLVER
#     sgeqrf + sorgqr), CholeskyQR in FP32 and in FP64 ([Baboulin et al. 2024] Algorithm 3).
# Output: bench/results/baboulin2024_fig1.csv and .png ($CSV_OUT changes the CSV; the PNG
# goes next to it). Needs `make CUDA=1 all bench` and a GPU; with backend cpu it
# runs small sizes on the CPU (the Tensor Core methods on the model) as a check.
# Extra arguments go to the program (build/bench_kernels --help), e.g. --ks 8,64,512.
#   bash bench/reproduce/baboulin2024_fig1.sh [backend: auto|cuda|cpu] [path/to/bench_kernels] [options...]
set -eu
backend=${1:-auto}
bin=${2:-build/bench_kernels}
shift $(( $# < 2 ? $# : 2 ))
if [ ! -x "$bin" ]; then
  echo "baboulin2024_fig1.sh: $bin not found: build it with 'make bench'" >&2
  exit 1
fi
out=${CSV_OUT:-bench/results/baboulin2024_fig1.csv}
mkdir -p "$(dirname "$out")"
rm -f "$out"
"$bin" --backend "$backend" --csv "$out" "$@"
python3 bench/plot_kernels.py "$out" "${out%.csv}.png"
