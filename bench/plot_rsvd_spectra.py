#!/usr/bin/env python3
"""Plots a bench_rsvd CSV run over several spectra (bench_rsvd --spectrum S
for each S, appended to one file): per spectrum, the time of each tcnla
variant split into its steps, next to cuSOLVER gesvdr's end-to-end time,
and the speedup over gesvdr. The last row of each (spectrum, method) is
used."""
import argparse
import csv

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

STEPS = ["t_random", "t_proj", "t_orth", "t_power", "t_bt", "t_svd"]
LABELS = ["random", "A*Omega", "orth", "power iterations", "last product (Q^T A, or A Z)",
          "small SVD + U, V"]
BASE = "cusolver_gesvdr"


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("csv", help="bench_rsvd CSV with a spectrum column")
    ap.add_argument("--out", required=True, help="the .png to write")
    a = ap.parse_args()
    last = {}
    for r in csv.DictReader(open(a.csv)):
        last[(r["spectrum"], r["method"])] = r
    if not last:
        raise SystemExit("no rows in " + a.csv)
    spectra = list(dict.fromkeys(s for s, _ in last))
    methods = [m for m in dict.fromkeys(m for _, m in last) if m != BASE]
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(14, 1.2 + 0.55 * len(spectra) * len(methods)),
                                 gridspec_kw={"width_ratios": [3, 2]})
    ticks, names, y = [], [], 0
    for s in spectra:
        base = last.get((s, BASE))
        tb = float(base["seconds"]) * 1e3 if base else None
        for m in methods:
            r = last.get((s, m))
            if r is None:
                continue
            left = 0.0
            for j, st in enumerate(STEPS):
                w = float(r[st]) * 1e3 if r.get(st) else 0.0
                ax.barh(y, w, left=left, color=plt.cm.tab10(j), label=LABELS[j] if y == 0 else None)
                left += w
            total = float(r["seconds"]) * 1e3
            ax.plot([total], [y], "k|", markersize=14)
            if tb:
                bx.barh(y, tb / total, color="tab:purple")
                bx.text(tb / total, y, " %.1fx" % (tb / total), va="center", fontsize=8)
            ticks.append(y)
            names.append("%s: %s" % (s, m))
            y += 1
        y += 0.5
    ax.set_yticks(ticks, names, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("ms (bars: steps of a synchronized run; tick: median end-to-end)")
    r0 = next(iter(last.values()))
    ax.set_title("randomized SVD %sx%s, k=%s, p=%s, q=%s, %s" % (r0["m"], r0["n"], r0["k"], r0["p"],
                                                                 r0["q"], r0["gpu"]), fontsize=9)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=6)
    bx.set_yticks(ticks, ["" for _ in ticks])
    bx.invert_yaxis()
    bx.set_xlabel("speedup over cuSOLVER gesvdr (same spectrum, same run)")
    fig.tight_layout()
    fig.savefig(a.out, dpi=110)
    print("wrote", a.out)


if __name__ == "__main__":
    main()
