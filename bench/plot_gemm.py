#!/usr/bin/env python3
"""Draws bench/results/gemm.csv (rows gpu,method,m,n,k,seconds,tflops,rel_err
appended by build/bench_gemm) into bench/results/gemm.png: effective TFLOP/s
(top) and relative Frobenius error against FP64 (bottom, log scale) for every
method and shape. Where a (gpu, method, shape) was measured more than once,
the last row counts.

    python3 bench/plot_gemm.py [--csv FILE] [--out FILE] [--gpu NAME]
"""
import argparse
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ORDER = [
    "cublas_sgemm", "native_fp32", "cublas_bf16x9", "tcec_fp16", "tcec_tf32",
    "markidis_fp16", "shgemm_fp16", "shgemm_tf32", "cublas_sgemm_hB", "cublas_tf32", "tf32",
    "cublas_fp16", "fp16", "cublas_dgemm", "native_fp64",
]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--csv", default="bench/results/gemm.csv")
    ap.add_argument("--out", default="bench/results/gemm.png")
    ap.add_argument("--gpu", default=None, help="GPU name to plot (default: the last one in the CSV)")
    a = ap.parse_args()

    rows = []
    with open(a.csv, newline="") as f:
        for r in csv.DictReader(f):
            try:
                rows.append((r["gpu"], r["method"], int(r["m"]), int(r["n"]), int(r["k"]),
                             float(r["tflops"]), float(r["rel_err"])))
            except (KeyError, ValueError):
                continue
    if not rows:
        sys.exit("no rows in " + a.csv)
    gpu = a.gpu or rows[-1][0]
    last = {}
    for g, meth, m, n, k, tf, err in rows:
        if g == gpu:
            last[(meth, (m, n, k))] = (tf, err)
    shapes = []
    for (_, s) in last:
        if s not in shapes:
            shapes.append(s)
    shapes.sort(key=lambda s: (s[0] != s[1] or s[1] != s[2], s[0] * s[1] * s[2]))
    methods = sorted({meth for (meth, _) in last},
                     key=lambda x: (ORDER.index(x.split("(")[0]) if x.split("(")[0] in ORDER
                                    else len(ORDER), x))

    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(max(10, 1.6 * len(shapes) + 4), 9), sharex=True)
    width = 0.85 / max(1, len(methods))
    cmap = plt.get_cmap("tab20")
    for i, meth in enumerate(methods):
        xs, tfs, errs = [], [], []
        for j, s in enumerate(shapes):
            if (meth, s) in last:
                xs.append(j + (i - (len(methods) - 1) / 2) * width)
                tfs.append(last[(meth, s)][0])
                errs.append(max(last[(meth, s)][1], 1e-17))
        style = dict(width=width, color=cmap(i % 20), label=meth)
        if "tcec" in meth or "shgemm" in meth:
            style.update(edgecolor="black", linewidth=0.6)
        ax1.bar(xs, tfs, **style)
        ax2.bar(xs, errs, **style)
    ax1.set_ylabel("effective TFLOP/s (2mnk / time)")
    ax1.set_title(f"GEMM methods vs cuBLAS, uniform(-1,1) inputs, {gpu}")
    ax1.grid(axis="y", alpha=0.3)
    ax2.set_yscale("log")
    ax2.set_ylabel("relative Frobenius error vs FP64")
    ax2.grid(axis="y", alpha=0.3)
    ax2.set_xticks(range(len(shapes)))
    ax2.set_xticklabels([f"{m}x{n}x{k}" for (m, n, k) in shapes], rotation=20)
    ax1.legend(ncol=4, fontsize=8, loc="upper left")
    fig.tight_layout()
    fig.savefig(a.out, dpi=120)
    print("wrote", a.out)


if __name__ == "__main__":
    main()
