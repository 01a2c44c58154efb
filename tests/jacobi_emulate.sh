#!/usr/bin/env bash
# Builds tests/jacobi_emulate.cpp (the GPU kernel of the small SVD's Jacobi
# path run on the CPU against its C reference) against BUILD's libtcnla.a
# (default build-cpu, else build) and runs it. Needs g++ and LAPACK.
#   tests/jacobi_emulate.sh [BUILD]
set -eu
b="${1:-}"
if [ -z "$b" ]; then for d in build-cpu build; do [ -f "$d/libtcnla.a" ] && { b=$d; break; }; done; fi
[ -f "${b:-}/libtcnla.a" ] || { echo "jacobi_emulate: no libtcnla.a (make lib first)" >&2; exit 2; }
out="$b/jacobi_emulate"
g++ -std=c++17 -O2 -g -Wall -Wextra -Wno-unknown-pragmas -ffp-contract=off -fno-strict-aliasing -Iinclude -Isrc -Itests \
  tests/jacobi_emulate.cpp "$b/libtcnla.a" -llapack -lblas -lgfortran -lm -fopenmp -lpthread -o "$out"
"$out"
