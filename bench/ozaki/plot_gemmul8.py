#!/usr/bin/env python3
"""Plots bench_ozaki's CSV with GEMMul8's rows (bench/ozaki/gemmul8.sh): one
panel per (precision, n, phi), TFLOP/s of cuBLAS, of tcnla's scheme II and
of each GEMMul8 configuration; bars whose max relative error exceeds
cuBLAS's on the same inputs are drawn pale, and the error is printed on
each bar. The last row of each (method, mode, phi, n) is used."""
import argparse
import csv

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def precision(method):
    return "SGEMM" if method.startswith("sgemm") else "DGEMM"


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--csv", default="bench/results/gemmul8.csv")
    ap.add_argument("--out", default="bench/results/gemmul8.png")
    a = ap.parse_args()
    last = {}
    for r in csv.DictReader(open(a.csv)):
        name = r["method"] + ("/" + r["mode"] if r["mode"] not in ("", "-") else "")
        last[(precision(r["method"]), r["n"], r["phi"], name)] = r
    if not last:
        raise SystemExit("no rows in " + a.csv)
    panels = list(dict.fromkeys(k[:3] for k in last))
    cols = 2
    rows = (len(panels) + cols - 1) // cols
    fig, axs = plt.subplots(rows, cols, figsize=(15, 4.2 * rows), squeeze=False)
    for ax, (prec, n, phi) in zip(axs.flat, panels):
        items = [(k[3], r) for k, r in last.items() if k[:3] == (prec, n, phi)]
        base = [r for name, r in items if name in ("cublas_dgemm", "sgemm_cublas")]
        berr = float(base[0]["max_rel_err"]) if base else None
        names = [name for name, _ in items]
        for i, (name, r) in enumerate(items):
            err = float(r["max_rel_err"])
            ok = berr is None or err <= berr
            color = ("tab:gray" if "cublas" in name else
                     "tab:blue" if name.startswith(("ozaki", "sgemm_ozaki")) else "tab:orange")
            ax.bar(i, float(r["tflops"]), color=color, alpha=1.0 if ok else 0.3)
            ax.text(i, float(r["tflops"]), "%.0e" % err, ha="center", va="bottom", fontsize=6,
                    rotation=90)
        ax.set_xticks(range(len(names)), names, rotation=60, ha="right", fontsize=7)
        ax.set_ylabel("TFLOP/s")
        ax.set_title("%s n=%s phi=%s (pale: max error above cuBLAS's %s)" %
                     (prec, n, phi, "%.1e" % berr if berr is not None else "?"), fontsize=9)
    for ax in list(axs.flat)[len(panels):]:
        ax.axis("off")
    gpu = next(iter(last.values()))["gpu"]
    fig.suptitle("Ozaki scheme II: tcnla (blue) and GEMMul8 (orange) beside cuBLAS (gray), " + gpu,
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(a.out, dpi=100)
    print("wrote", a.out)


if __name__ == "__main__":
    main()
