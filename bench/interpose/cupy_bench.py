#!/usr/bin/env python3
"""Unmodified CuPy FP32 products, timed (bench/interpose/run.sh runs it
without and with LD_PRELOAD=libtcnla_cublas.so):
  cupy.matmul 8192^3 FP32        -> cublasGemmEx
  cupy.matmul 32 x 1024^3 FP32   -> cublasGemmStridedBatchedEx
One JSON line per op (program, op, m, n, k, seconds = best of --reps,
rel_err = relative Frobenius error against the product in FP64, cuBLAS
DGEMM in both runs: run.sh sets TCNLA_CUBLAS_FP64=native)."""
import argparse
import json
import math

import cupy as cp


def best_seconds(fn, reps, warmup=3):
    for _ in range(warmup):
        fn()
    cp.cuda.Device().synchronize()
    best = math.inf
    for _ in range(reps):
        s, e = cp.cuda.Event(), cp.cuda.Event()
        s.record()
        fn()
        e.record()
        e.synchronize()
        best = min(best, cp.cuda.get_elapsed_time(s, e) * 1e-3)
    return best


def rel_err(x, ref):
    return float(cp.linalg.norm(x.astype(cp.float64) - ref) / cp.linalg.norm(ref))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--n", type=int, default=8192)
    ap.add_argument("--reps", type=int, default=10)
    a = ap.parse_args()
    rng = cp.random.default_rng(0)
    rows = []
    n = a.n
    A = rng.standard_normal((n, n), dtype=cp.float32)
    B = rng.standard_normal((n, n), dtype=cp.float32)
    t = best_seconds(lambda: cp.matmul(A, B), a.reps)
    err = rel_err(cp.matmul(A, B), cp.matmul(A.astype(cp.float64), B.astype(cp.float64)))
    rows.append({"program": "cupy", "op": "cupy.matmul", "m": n, "n": n, "k": n,
                 "seconds": t, "rel_err": err})
    del A, B
    A = rng.standard_normal((32, 1024, 1024), dtype=cp.float32)
    B = rng.standard_normal((32, 1024, 1024), dtype=cp.float32)
    t = best_seconds(lambda: cp.matmul(A, B), a.reps)
    err = rel_err(cp.matmul(A, B), cp.matmul(A.astype(cp.float64), B.astype(cp.float64)))
    rows.append({"program": "cupy", "op": "cupy.matmul x32", "m": 1024, "n": 1024, "k": 1024,
                 "seconds": t, "rel_err": err})
    with open(a.out, "a") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
            print(json.dumps(r), flush=True)


if __name__ == "__main__":
    main()
