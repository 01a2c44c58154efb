#!/usr/bin/env python3
"""[Ootomo & Yokota 2023] Fig. 3 from the CSV of build/bench_proj_mantissa.

Top row: ||A - Q Q^T A||_F against the mantissa length Y of the e8mY-rounded
Gaussian matrix, one line per projection size l (mean over seeds, the band is
min..max). Bottom row, for l >= r + 2 (oversampling p >= 2, where the bound
of Halko et al. holds; with p = 0 the error is dominated by the smallest
singular value of a square random matrix and differs wildly between any two
random matrices): the same error divided by that of the unrounded (FP32,
Y = 23) Gaussian matrix of the same seed, whose rounding it is. Prints the
mean errors and, per Y, the largest |ratio - 1| over l >= r + 2 and seeds.

    python3 bench/plot_proj_mantissa.py [bench/results/ootomo2023_fig3.csv] [out.png]
"""
import csv
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else "bench/results/ootomo2023_fig3.csv"
    dst = sys.argv[2] if len(sys.argv) > 2 else src.rsplit(".", 1)[0] + ".png"
    rows = list(csv.DictReader(open(src)))
    if not rows:
        sys.exit("no rows in " + src)
    mats = [m for m in ("type1", "type2") if any(r["matrix"] == m for r in rows)]
    err = defaultdict(dict)  # (matrix, l, Y) -> {seed: abs_err}
    for r in rows:
        err[(r["matrix"], int(r["l"]), int(r["mantissa_bits"]))][int(r["seed"])] = float(r["abs_err"])
    n, rr = rows[0]["n"], int(rows[0]["r"])
    fig, axs = plt.subplots(2, len(mats), figsize=(6.5 * len(mats), 8.5), squeeze=False,
                            sharex=True)
    for c, m in enumerate(mats):
        ls = sorted({l for (mm, l, _) in err if mm == m})
        ys = sorted({y for (mm, _, y) in err if mm == m})
        cmap = plt.get_cmap("viridis")
        print("%s (n = %s, r = %d): mean ||A - QQ^T A||_F over seeds" % (m, n, rr))
        print("  %5s" % "l" + "".join("  %11s" % ("e8m%d" % y) for y in ys))
        for i, l in enumerate(ls):
            col = cmap(i / max(1, len(ls) - 1))
            mean, lo, hi, rmean, rlo, rhi = [], [], [], [], [], []
            for y in ys:
                v = list(err[(m, l, y)].values())
                mean.append(sum(v) / len(v)), lo.append(min(v)), hi.append(max(v))
                ref = err.get((m, l, 23), {})
                q = [err[(m, l, y)][s] / ref[s] for s in err[(m, l, y)] if s in ref and ref[s] > 0]
                if q:
                    rmean.append(sum(q) / len(q)), rlo.append(min(q)), rhi.append(max(q))
                else:
                    rmean.append(float("nan")), rlo.append(float("nan")), rhi.append(float("nan"))
            print("  %5d" % l + "".join("  %11.4e" % x for x in mean))
            axs[0][c].semilogy(ys, mean, "o-", color=col, label="l = %d" % l)
            axs[0][c].fill_between(ys, lo, hi, color=col, alpha=0.15)
            if l >= rr + 2:
                axs[1][c].plot(ys, rmean, "o-", color=col, label="l = %d" % l)
                axs[1][c].fill_between(ys, rlo, rhi, color=col, alpha=0.15)
        dev = {}
        for (mm, l, y), d in err.items():
            ref = err.get((m, l, 23), {})
            if mm == m and l >= rr + 2:
                for s, e in d.items():
                    if s in ref and ref[s] > 0:
                        dev[y] = max(dev.get(y, 0.0), abs(e / ref[s] - 1))
        if dev:
            print("  l >= r + 2: largest |err(Y) / err(FP32, same seed) - 1| over l and seeds:")
            print("  %5s" % "" + "".join("  %11s" % ("e8m%d" % y) for y in sorted(dev)))
            print("  %5s" % "" + "".join("  %11.2e" % dev[y] for y in sorted(dev)))
            spread = [(max(d.values()) - min(d.values())) / (sum(d.values()) / len(d))
                      for (mm, l, y), d in err.items()
                      if mm == m and y == 23 and l >= rr + 2 and len(d) > 1]
            if spread:
                print("  for scale, between seeds with the FP32 Gaussian: (max - min) / mean up to %.2e"
                      % max(spread))
        axs[0][c].set_title("%s, n = %s, r = %d" % (m, n, rr))
        axs[0][c].set_ylabel("||A - Q Q^T A||_F (mean, band: min..max over seeds)")
        axs[1][c].set_ylabel("error / error with the FP32 Gaussian (same seed)")
        axs[1][c].set_title("l >= r + 2", fontsize=9)
        if any(l >= rr + 2 for l in ls):
            axs[1][c].legend(fontsize=8, ncol=2)
        axs[1][c].set_xlabel("mantissa length Y of the e8mY Gaussian matrix (23 = FP32)")
        axs[1][c].set_xticks(ys)
        axs[0][c].legend(fontsize=8, ncol=2)
    seeds = len({r["seed"] for r in rows})
    fig.suptitle("[Ootomo & Yokota 2023] Fig. 3: random projection with RN-rounded Gaussian matrices, "
                 "projection in FP64 (%s, %d seeds)" % (rows[0]["gpu"], seeds))
    fig.tight_layout()
    fig.savefig(dst, dpi=110)
    print("wrote", dst)


if __name__ == "__main__":
    main()
