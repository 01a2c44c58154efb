#!/usr/bin/env python3
"""Plots bench/results/hosvd_fig9.csv (one run of build/bench_hosvd over three
sizes and every variant; hosvd.csv keeps every run): for each tensor
size, the last measured time of the FP32 RP-HOSVD pipeline and of each
Tensor Core variant on the same GPU, with the speed-up over FP32 and the
relative error ([Ootomo & Yokota 2023] Fig. 9 style)."""
import argparse
import csv

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--csv", default="bench/results/hosvd_fig9.csv")
    ap.add_argument("--out", default="bench/results/hosvd.png")
    ap.add_argument("--gpu", default=None, help="rows of this GPU only (default: the last row's)")
    a = ap.parse_args()
    rows = list(csv.DictReader(open(a.csv)))
    if not rows:
        raise SystemExit("no rows in " + a.csv)
    gpu = a.gpu or rows[-1]["gpu"]
    last = {}  # (dims, method) -> the last row of that pair on this GPU
    for r in rows:
        if r["gpu"] == gpu:
            last[(r["dims"], r["method"])] = r
    dims = sorted({d for d, _ in last}, key=lambda d: int(d.split("x")[0]))
    methods = ["fp32"] + sorted({m for _, m in last if m != "fp32"})
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(12, 4.8))
    w = 0.8 / len(methods)
    for j, m in enumerate(methods):
        xs, ts, es = [], [], []
        for i, d in enumerate(dims):
            r = last.get((d, m))
            if r is None:
                continue
            xs.append(i + (j - (len(methods) - 1) / 2) * w)
            ts.append(float(r["seconds"]) * 1e3)
            es.append(float(r["rel_err"]))
            base = last.get((d, "fp32"))
            if base is not None and m != "fp32":
                sp = float(base["seconds"]) / float(r["seconds"])
                ax.annotate(f"{sp:.2f}x", (xs[-1], ts[-1]), ha="center", va="bottom", fontsize=7)
        ax.bar(xs, ts, width=w, label=m)
        bx.bar(xs, es, width=w, label=m)
    for x in (ax, bx):
        x.set_xticks(range(len(dims)))
        x.set_xticklabels([d.replace("x", " x ") for d in dims])
        x.set_xlabel("tensor")
    ax.set_ylabel("time per call (ms)")
    ax.set_title(f"RP-HOSVD, ranks {rows[-1]['ranks']}, {gpu}")
    ax.legend(fontsize=8)
    bx.set_yscale("log")
    bx.set_ylabel("||A - core x Q||_F / ||A||_F")
    bx.set_title("relative error")
    fig.tight_layout()
    fig.savefig(a.out, dpi=110)
    print("wrote", a.out)


if __name__ == "__main__":
    main()
