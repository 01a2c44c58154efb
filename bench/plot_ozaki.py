#!/usr/bin/env python3
"""Plot bench/results/ozaki.csv (bench/ozaki.c, [Mukunoki et al. 2020] Table 1 on the GPU):
left, effective TFLOP/s per method and phi for each n; right, max relative
error against the exact (correctly rounded) reference. -> bench/results/ozaki.png"""
import argparse
import csv
import collections

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--csv", default="bench/results/ozaki.csv")
    ap.add_argument("--out", default="bench/results/ozaki.png")
    a = ap.parse_args()
    rows = list(csv.DictReader(open(a.csv)))
    if not rows:
        print("no rows")
        return
    gpu = rows[-1]["gpu"]
    rows = [r for r in rows if r["gpu"] == gpu and not r["method"].startswith("sgemm_")]
    last = collections.OrderedDict()  # latest row per (method, mode, phi, n)
    for r in rows:
        last[(r["method"], r["mode"], float(r["phi"]), int(r["n"]))] = r
    labels = []
    for (m, md, _, _) in last:
        lab = m if md == "-" else f"{m} {md}"
        if lab not in labels:
            labels.append(lab)
    ns = sorted({k[3] for k in last})
    phis = sorted({k[2] for k in last})
    fig, axes = plt.subplots(len(ns), 2, figsize=(13, 3.6 * len(ns)), squeeze=False)
    w = 0.8 / max(1, len(phis))
    for row, n in enumerate(ns):
        for col, key in enumerate(("tflops", "max_rel_err")):
            ax = axes[row][col]
            for pi, phi in enumerate(phis):
                xs, ys = [], []
                for li, lab in enumerate(labels):
                    m, _, md = lab.partition(" ")
                    r = last.get((m, md or "-", phi, n))
                    if r:
                        xs.append(li + (pi - (len(phis) - 1) / 2) * w)
                        ys.append(max(float(r[key]), 1e-20) if key != "tflops" else float(r[key]))
                ax.bar(xs, ys, width=w, label=f"phi={phi:g}")
            ax.set_xticks(range(len(labels)))
            ax.set_xticklabels(labels, rotation=25, ha="right", fontsize=8)
            if key == "tflops":
                ax.set_ylabel("effective TFLOP/s (2n^3/t)")
            else:
                ax.set_yscale("log")
                ax.set_ylabel("max rel. error (sampled)")
            ax.set_title(f"n = {n}")
            ax.legend(fontsize=7)
            ax.grid(axis="y", alpha=0.3)
    fig.suptitle(f"Ozaki scheme vs cuBLAS DGEMM, {gpu}")
    fig.tight_layout()
    fig.savefig(a.out, dpi=110)
    print("wrote", a.out)


if __name__ == "__main__":
    main()
