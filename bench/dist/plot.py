#!/usr/bin/env python3
"""Plots the CSV of bench/dist/run.sh (bench/results/dist_scaling.csv): the
randomized SVD's time per step as stacked bars per GPU count, strong scaling
(one matrix over 1, 2, 4 GPUs) and weak scaling (the rows per GPU fixed),
with the residual against the Eckart-Young optimum above each bar.
Usage: plot.py [CSV [PNG]]"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

STEPS = ["step_random", "step_proj", "step_orth", "step_power", "step_bt", "step_svd"]
LABELS = ["random", "A*Omega", "orth", "power iterations", "A^T Q", "small SVD + U, V"]


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else "bench/results/dist_scaling.csv"
    dst = sys.argv[2] if len(sys.argv) > 2 else "bench/results/dist_scaling.png"
    rows = [r for r in csv.DictReader(open(src)) if r["seconds"]]
    if not rows:
        raise SystemExit("no rows in " + src)
    groups = [("strong", [r for r in rows if r["scaling"] == "strong"]),
              ("weak", [r for r in rows if r["scaling"] == "weak"])]
    groups = [(g, rs) for g, rs in groups if rs]
    fig, axes = plt.subplots(1, len(groups), figsize=(6.5 * len(groups), 5), squeeze=False)
    for ax, (name, rs) in zip(axes[0], groups):
        rs.sort(key=lambda r: (int(r["m"]) // int(r["gpus"]) if name == "weak" else 0,
                               int(r["gpus"]), r["launch"]))
        ticks = []
        for i, r in enumerate(rs):
            bottom = 0.0
            for j, s in enumerate(STEPS):
                w = float(r[s]) if r[s] else 0.0
                ax.bar(i, w, bottom=bottom, color=plt.cm.tab10(j),
                       label=LABELS[j] if i == 0 else None)
                bottom += w
            total = float(r["seconds"])
            ax.plot([i - 0.4, i + 0.4], [total, total], color="k", lw=1)
            if r["rel_err"] and r["opt_err"]:
                ax.text(i, total, "%.2e\n(opt %.2e)" % (float(r["rel_err"]), float(r["opt_err"])),
                        ha="center", va="bottom", fontsize=7)
            gib = int(r["m"]) * int(r["n"]) * 4 / 2**30
            ticks.append("%s GPU%s%s\n%d x %d\n(%.0f GiB, %.0f per GPU)" % (
                r["gpus"], "s" if r["gpus"] != "1" else "", " MPI" if r["launch"] == "mpi" else "",
                int(r["m"]), int(r["n"]), gib, gib / int(r["gpus"])))
        ax.set_xticks(range(len(rs)))
        ax.set_xticklabels(ticks, fontsize=7)
        ax.set_ylabel("seconds (median of 3; steps stacked, line: total)")
        r0 = rs[0]
        ax.set_title("%s scaling: rank %s, p %s, q %s, %s" % (name, r0["k"], r0["p"], r0["q"], r0["gpu"]),
                     fontsize=9)
        ax.set_ylim(0, max(float(r["seconds"]) for r in rs) * 1.25)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, fontsize=8, loc="lower center", ncol=len(STEPS))
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    fig.savefig(dst, dpi=130)
    print("wrote", dst)


if __name__ == "__main__":
    main()
