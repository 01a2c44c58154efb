#!/usr/bin/env bash
# [Baboulin et al. 2024] Fig. 2 and 3: time and accuracy of randomized LRA variants (tgemm
# 32|32, 16|16, 16|32 with CholeskyQR in FP64, without and with iterative
# refinement) against the FP32 baseline (SGEMM + Householder) for several
# ranks, on A = X Y^T (bench/lra, GPU). Output: bench/results/baboulin2024_lra.csv, .png
#   [P=p] [PLOT_ONLY=1] bash bench/reproduce/baboulin2024_fig23.sh [m] [ranks...]
# P: oversampling, 0 as in the paper ("we do not use any oversampling");
# PLOT_ONLY=1 redraws the plot from the CSV.
set -eu
m=${1:-16384}
shift || true
ranks=${*:-64 128 256 512}
p=${P:-0}
res=bench/results
out=$res/baboulin2024_lra.csv
if [ -z "${PLOT_ONLY:-}" ]; then
  rm -f "$out"
  for k in $ranks; do ./build/bench_lra --m "$m" --n "$m" --rank "$k" --oversampling "$p" --reps 3 --csv "$out"; done
fi
python3 - "$out" "$res/baboulin2024_lra.png" <<'PY'
import csv, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
rows = list(csv.DictReader(open(sys.argv[1])))
meths = []
for r in rows:
    if r["method"] not in meths:
        meths.append(r["method"])
fig, (a, b) = plt.subplots(1, 2, figsize=(13, 4.5))
m = rows[0]["m"]
for me in meths:
    rr = sorted((r for r in rows if r["method"] == me), key=lambda r: int(r["k"]))
    ks = [int(r["k"]) for r in rr]
    ls = "--" if "fp32" in me else "-"
    a.plot(ks, [float(r["seconds"]) * 1e3 for r in rr], "o" + ls, label=me)
    b.semilogy(ks, [float(r["rel_err"]) for r in rr], "o" + ls, label=me)
a.set_xlabel("rank k"); a.set_ylabel("ms"); a.set_xscale("log", base=2)
b.set_xlabel("rank k"); b.set_ylabel("||A - X Y^T||_F / ||A||_F"); b.set_xscale("log", base=2)
a.legend(fontsize=7)
fig.suptitle("[Baboulin et al. 2024] Fig. 2/3: randLRA, m = n = %s, A = X Y^T, oversampling %s, %s"
             % (m, rows[0]["p"], rows[0]["gpu"]))
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=120)
print("wrote", sys.argv[2])
PY
