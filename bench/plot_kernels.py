#!/usr/bin/env python3
"""[Baboulin et al. 2024] Fig. 1 from the CSV of build/bench_kernels: (a) TFLOP/s of the GEMM
variants (2mnk / time) and (b) of the QR kernels (the paper's reference count
2nk^2 - 2k^3/3 for all) against k; prints the tables and the ratios the paper
discusses (tgemm against sgemm, CholeskyQR FP64 against Householder).

    python3 bench/plot_kernels.py [bench/results/baboulin2024_fig1.csv] [out.png]
"""
import csv
import math
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

STYLE = {
    "sgemm": ("k", "--", "sgemm (NATIVE_FP32)"),
    "tgemm32_32": ("tab:blue", "-", "tgemm 32|32"),
    "tgemm16_32": ("tab:orange", "-", "tgemm 16|32, inputs already FP16"),
    "tgemm16_16": ("tab:green", "-", "tgemm 16|16, inputs already FP16"),
    "tgemm16_32+conv": ("tab:orange", ":", "tgemm 16|32 with conversion"),
    "tgemm16_16+conv": ("tab:green", ":", "tgemm 16|16 with conversion"),
    "cublas_fp16_16_32": ("0.55", "-.", "cuBLAS on FP16 storage, C FP32"),
    "cublas_fp16_16_16": ("0.75", "-.", "cuBLAS on FP16 storage, C FP16"),
    "householder": ("tab:red", "-", "Householder (sgeqrf + sorgqr)"),
    "cholqr_fp32": ("tab:purple", "-", "CholeskyQR FP32"),
    "cholqr_fp64": ("tab:brown", "-", "CholeskyQR FP64 (Alg. 3)"),
}


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else "bench/results/baboulin2024_fig1.csv"
    dst = sys.argv[2] if len(sys.argv) > 2 else src.rsplit(".", 1)[0] + ".png"
    rows = [r for r in csv.DictReader(open(src))]
    if not rows:
        sys.exit("no rows in " + src)
    dev, m = rows[0]["gpu"], rows[0]["m"]
    t = {}
    for r in rows:
        if r["status"] == "ok":
            t[(r["kernel"], r["method"], int(r["k"]))] = r
    fig, axs = plt.subplots(1, 2, figsize=(14, 5))
    for ax, kern in zip(axs, ("gemm", "qr")):
        meths = []
        for r in rows:
            if r["kernel"] == kern and r["method"] not in meths:
                meths.append(r["method"])
        ks = sorted({int(r["k"]) for r in rows if r["kernel"] == kern})
        if not ks:
            ax.set_visible(False)
            continue
        print("%s, m = n = %s, %s: TFLOP/s (ms)" % (kern, m, dev))
        print("  %-20s" % "k" + "".join("%18d" % k for k in ks))
        for me in meths:
            col, ls, lab = STYLE.get(me, (None, "-", me))
            kk = [k for k in ks if (kern, me, k) in t]
            tf = [float(t[(kern, me, k)]["tflops"]) for k in kk]
            ax.plot(kk, tf, "o" + ls, color=col, label=lab)
            cells = []
            for k in ks:
                r = t.get((kern, me, k))
                cells.append("%9.3g (%6.2f)" % (float(r["tflops"]), 1e3 * float(r["seconds"]))
                             if r else "%18s" % "failed")
            print("  %-20s" % me + "".join(cells))
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xticks(ks, [str(k) for k in ks])
        ax.minorticks_off()
        ax.set_xlabel("k")
        ax.legend(fontsize=8)
        if kern == "gemm":
            ax.set_ylabel("TFLOP/s = 2mnk / time")
            ax.set_title("(a) GEMM: C = A B, A %s x %s, B %s x k" % (m, m, m))
        else:
            ax.set_ylabel("TFLOP/s = (2nk^2 - 2k^3/3) / time")
            ax.set_title("(b) QR of an n x k matrix, n = %s" % m)

    def ratio(kern, a, b):
        out = []
        for k in sorted({k for (kk, me, k) in t if kk == kern and me == a}):
            if (kern, b, k) in t:
                out.append((k, float(t[(kern, b, k)]["seconds"]) / float(t[(kern, a, k)]["seconds"])))
        return out

    for a in ("tgemm32_32", "tgemm16_32", "tgemm16_32+conv", "cublas_fp16_16_32"):
        rr = ratio("gemm", a, "sgemm")
        if rr:
            print("speedup of %s over sgemm: " % a + ", ".join("k=%d %.2fx" % x for x in rr))
    for a in ("cholqr_fp64", "cholqr_fp32"):
        rr = ratio("qr", a, "householder")
        if rr:
            print("speedup of %s over householder: " % a + ", ".join("k=%d %.2fx" % x for x in rr))
    errs = {}
    for (kern, me, k), r in t.items():
        key = "orth_err" if kern == "qr" else "rel_err"
        if r[key]:
            errs.setdefault(me, []).append(float(r[key]))
    for me, v in errs.items():
        v = [x for x in v if not math.isnan(x)]
        if v:
            print("%-20s %s %.2e .. %.2e" % (me, "||Q^T Q - I||_F" if me in ("householder", "cholqr_fp32", "cholqr_fp64") else "rel_err", min(v), max(v)))
    fig.suptitle("[Baboulin et al. 2024] Fig. 1: GEMM and QR kernels, %s" % dev)
    fig.tight_layout()
    fig.savefig(dst, dpi=110)
    print("wrote", dst)


if __name__ == "__main__":
    main()
