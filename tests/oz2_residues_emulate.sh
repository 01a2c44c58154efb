#!/usr/bin/env bash
# Builds tests/oz2_residues_emulate.cpp (scheme II's residue kernel
# k_residues, its source taken from src/backend/cuda/kernels/ozaki2_kernels.cu,
# run on the CPU against tn_oz2_residue) against BUILD's libtcnla.a (default
# build-cpu, else build) and runs it. Needs g++ with C++20 (std::barrier).
#   tests/oz2_residues_emulate.sh [BUILD]
set -eu
b="${1:-}"
if [ -z "$b" ]; then for d in build-cpu build; do [ -f "$d/libtcnla.a" ] && { b=$d; break; }; done; fi
[ -f "${b:-}/libtcnla.a" ] || { echo "oz2_residues_emulate: no libtcnla.a (make lib first)" >&2; exit 2; }
# the kernel: from its tile constants up to the next section of the file
src=src/backend/cuda/kernels/ozaki2_kernels.cu
awk '/^#define OZ2_RV /{f=1} f&&/^\/\* -+ products modulo p_l/{exit} f{print}' "$src" >"$b/oz2_residues_kernel.inc"
grep -q "k_residues(" "$b/oz2_residues_kernel.inc" ||
  { echo "oz2_residues_emulate: k_residues not found in $src" >&2; exit 2; }
out="$b/oz2_residues_emulate"
g++ -std=c++20 -O1 -g -Wall -Wextra -Wno-unknown-pragmas -ffp-contract=off -Iinclude -Isrc -Itests -I"$b" \
  tests/oz2_residues_emulate.cpp "$b/libtcnla.a" -lm -fopenmp -lpthread -o "$out"
"$out"
