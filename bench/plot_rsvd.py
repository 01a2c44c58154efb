#!/usr/bin/env python3
"""Plots bench/results/rsvd.csv (written by build/bench_rsvd): time per step of
each randomized-SVD variant next to cuSOLVER gesvdr, and the residual against
the Eckart-Young optimum ([Ootomo & Yokota 2023] Fig. 8 style)."""
import argparse
import csv

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402,F401

STEPS = ["t_random", "t_proj", "t_orth", "t_power", "t_bt", "t_svd"]
LABELS = ["random", "A*Omega", "orth", "power iterations", "A^T Q", "QR + small SVD + U, V"]


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--csv", default="bench/results/rsvd.csv")
    ap.add_argument("--out", default="bench/results/rsvd.png")
    a = ap.parse_args()
    rows = list(csv.DictReader(open(a.csv)))
    if not rows:
        raise SystemExit("no rows in " + a.csv)
    last = {}
    for r in rows:  # the last run of each method
        last[r["method"]] = r
    rows = list(last.values())
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(13, 5.4), gridspec_kw={"width_ratios": [3, 2]})
    names = [r["method"] for r in rows]
    for i, r in enumerate(rows):
        total = float(r["seconds"]) * 1e3
        if r[STEPS[0]] == "":
            ax.barh(i, total, color="0.6", label="cuSOLVER gesvdr" if i == 0 else None)
            continue
        left = 0.0
        for j, s in enumerate(STEPS):
            w = float(r[s]) * 1e3
            ax.barh(i, w, left=left, color=plt.cm.tab10(j), label=LABELS[j] if i == len(rows) - 1 else None)
            left += w
        ax.plot([total], [i], "k|", markersize=14)
    ax.set_yticks(range(len(rows)), names)
    ax.set_xlabel("ms (bars: steps, synchronized; tick: median end-to-end time)")
    r0 = rows[0]
    ax.set_title("randomized SVD m=%s n=%s k=%s p=%s q=%s, %s" % (r0["m"], r0["n"], r0["k"], r0["p"], r0["q"], r0["gpu"]))
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=4)
    opt = float(r0["optimal"])
    bx.barh(range(len(rows)), [float(r["rel_err"]) / opt for r in rows], color="tab:purple")
    bx.set_yticks(range(len(rows)), ["" for _ in rows])
    bx.set_xlim(0.99, max(1.01, max(float(r["rel_err"]) / opt for r in rows) * 1.002))
    bx.set_xlabel("||A - U S V^T||_F / optimal (Eckart-Young)")
    bx.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(4))
    fig.tight_layout()
    fig.savefig(a.out, dpi=120)
    print("wrote", a.out)


if __name__ == "__main__":
    main()
