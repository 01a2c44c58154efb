#!/usr/bin/env bash
# [Ootomo & Yokota 2023] Fig. 3: accuracy of the random projection ||A - Q Q^T A||_F when
# the Gaussian random matrix is rounded (RN) to e8mY, Y = 0 ... 23 fraction
# bits, with A and the rounded matrix widened to FP64 and the projection
# computed in FP64 ([Ootomo & Yokota 2023] section 3.3), for the paper's type-1 (low rank +
# noise) and type-2 (polynomial decay) matrices, n = 4096, r = 20, several
# projection sizes l, 3 seeds. Runs on the CPU (about 75 s on 2 cores);
# N in the environment changes n. Extra arguments go to the program (see
# build/bench_proj_mantissa --help).
# Output: bench/results/ootomo2023_fig3.csv and .png.
#   bash bench/reproduce/ootomo2023_fig3.sh [path/to/bench_proj_mantissa] [options...]
set -eu
bin=${1:-build/bench_proj_mantissa}
shift || true
if [ ! -x "$bin" ]; then
  echo "ootomo2023_fig3.sh: $bin not found: build it with 'make bench'" >&2
  exit 1
fi
res=bench/results
mkdir -p "$res"
out=$res/ootomo2023_fig3.csv
rm -f "$out"
"$bin" --n "${N:-4096}" --csv "$out" "$@"
python3 bench/plot_proj_mantissa.py "$out" "$res/ootomo2023_fig3.png"
