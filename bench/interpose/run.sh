#!/usr/bin/env bash
# The interposition benchmark on a GPU machine: unmodified PyTorch
# (torch_bench.py: torch.matmul 8192^2 FP32 with TF32 off, torch.bmm,
# nn.Linear with bias, a 200-step MLP training run), CuPy (cupy_bench.py:
# cupy.matmul) and a C program calling cublasDgemm_v2 (dgemm.c, n = 8192
# and 16384), each run without and with LD_PRELOAD=build/libtcnla_cublas.so
# in this one invocation. Writes to OUTDIR (default $OUT):
#   interpose.csv   gpu, program, op, m, n, k, seconds_native, seconds_tcnla,
#                   rel_err_native, rel_err_tcnla (speedups printed)
#   mlp_loss_native.csv, mlp_loss_tcnla.csv   the training runs' loss curves
#   interpose_bench_stats.txt   the hooks' exit summaries (TCNLA_CUBLAS_LOG)
#   interpose_bench.log         everything printed
# The Python runs set TCNLA_CUBLAS_FP64=native: their FP64 references are
# cuBLAS DGEMM in both runs. No network needed (torch, cupy preinstalled).
#   bench/interpose/run.sh [OUTDIR]
set -u
OUT="${1:-${OUT:?usage: run.sh OUTDIR}}"
mkdir -p "$OUT"
. tests/gpu/env.sh
make -j16 CUDA=1 lib interpose >"$OUT/interpose_bench_build.log" 2>&1 || {
    tail -30 "$OUT/interpose_bench_build.log"; exit 1; }
SO=$PWD/build/libtcnla_cublas.so
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
LOG=$OUT/interpose_bench.log
: >"$LOG"
for mode in native tcnla; do
    J=$OUT/bench_$mode.jsonl
    : >"$J"
    pre=()
    [ "$mode" = tcnla ] && pre=(LD_PRELOAD="$SO" TCNLA_CUBLAS_LOG="$OUT/interpose_bench_stats.txt")
    echo "== $mode" | tee -a "$LOG"
    env "${pre[@]}" TCNLA_CUBLAS_FP64=native timeout "${BENCH_TIMEOUT_PY:-900}" \
        python3 bench/interpose/torch_bench.py --out "$J" --loss "$OUT/mlp_loss_$mode.csv" \
        2>&1 | tee -a "$LOG"
    env "${pre[@]}" TCNLA_CUBLAS_FP64=native timeout "${BENCH_TIMEOUT_PY:-900}" \
        python3 bench/interpose/cupy_bench.py --out "$J" 2>&1 | tee -a "$LOG"
    for n in 8192 16384; do
        env "${pre[@]}" timeout "${BENCH_TIMEOUT_C:-600}" ./build/bench_interpose_dgemm "$n" 5 \
            2>&1 | tee -a "$LOG" "$J" >/dev/null
    done
    tail -n 20 "$J"
done
python3 bench/interpose/merge.py --gpu "$GPU" "$OUT/bench_native.jsonl" "$OUT/bench_tcnla.jsonl" \
    >"$OUT/interpose.csv" 2> >(tee -a "$LOG" >&2)
cat "$OUT/interpose.csv"
cat "$OUT/interpose_bench_stats.txt" 2>/dev/null | tail -40
