#!/usr/bin/env python3
"""[Mukunoki et al. 2020] Fig. 3 and Fig. 4 from bench/results/ozaki.csv (bench/ozaki.c):
Fig. 3, the largest relative error against the correctly rounded product
as phi grows (one panel per n); Fig. 4, TFLOP/s (2 n^3 / time) as n grows
(one panel per phi). DGEMM-level rows only (cuBLAS DGEMM, cuBLAS fixed-point
emulation, the Ozaki DP modes); the latest row per (method, mode, phi, n).
  python3 bench/plot_mukunoki2020.py [--csv F] [--out-prefix bench/results/mukunoki2020]"""
import argparse
import collections
import csv

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

KEEP = {("cublas_dgemm", "-"), ("cublas_fixedpoint_emu", "-"), ("ozaki_fp16", "DP"),
        ("ozaki_int8", "DP"), ("ozaki_int8_crt", "DP")}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--csv", default="bench/results/ozaki.csv")
    ap.add_argument("--out-prefix", default="bench/results/mukunoki2020")
    a = ap.parse_args()
    rows = [r for r in csv.DictReader(open(a.csv)) if (r["method"], r["mode"]) in KEEP]
    if not rows:
        print("no rows")
        return
    gpu = rows[-1]["gpu"]
    last = collections.OrderedDict()
    for r in rows:
        if r["gpu"] == gpu:
            last[(r["method"], r["mode"], float(r["phi"]), int(r["n"]))] = r
    labels = sorted({(m, md) for (m, md, _, _) in last})
    ns = sorted({k[3] for k in last})
    phis = sorted({k[2] for k in last})

    def name(m, md):
        return m if md == "-" else f"{m} {md}"

    fig, axes = plt.subplots(1, len(ns), figsize=(4.5 * len(ns), 3.8), squeeze=False)
    for ax, n in zip(axes[0], ns):
        for (m, md) in labels:
            pts = [(p, float(last[(m, md, p, n)]["max_rel_err"])) for p in phis
                   if (m, md, p, n) in last]
            if pts:
                ax.semilogy([p for p, _ in pts], [max(e, 1e-18) for _, e in pts], "o-",
                            label=name(m, md))
        ax.set_title(f"n = {n}")
        ax.set_xlabel("phi")
        ax.set_ylabel("max relative error")
        ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=7)
    fig.suptitle(f"[Mukunoki et al. 2020] Fig. 3 on {gpu}: accuracy in DP mode vs cuBLAS DGEMM")
    fig.tight_layout()
    fig.savefig(a.out_prefix + "_fig3.png", dpi=110)

    fig, axes = plt.subplots(1, len(phis), figsize=(4.5 * len(phis), 3.8), squeeze=False)
    for ax, p in zip(axes[0], phis):
        for (m, md) in labels:
            pts = [(n, float(last[(m, md, p, n)]["tflops"])) for n in ns if (m, md, p, n) in last]
            if pts:
                ax.plot([n for n, _ in pts], [t for _, t in pts], "o-", label=name(m, md))
        ax.set_title(f"phi = {p:g}")
        ax.set_xlabel("n (m = n = k)")
        ax.set_ylabel("TFLOP/s (2 n^3 / time)")
        ax.set_xscale("log", base=2)
        ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=7)
    fig.suptitle(f"[Mukunoki et al. 2020] Fig. 4 on {gpu}: DGEMM throughput in DP mode")
    fig.tight_layout()
    fig.savefig(a.out_prefix + "_fig4.png", dpi=110)
    for (m, md) in labels:
        print(name(m, md), " ".join(
            f"n={n}/phi={p:g}:{float(last[(m, md, p, n)]['tflops']):.1f}TF,"
            f"{float(last[(m, md, p, n)]['max_rel_err']):.1e}"
            for n in ns for p in phis if (m, md, p, n) in last))


if __name__ == "__main__":
    main()
