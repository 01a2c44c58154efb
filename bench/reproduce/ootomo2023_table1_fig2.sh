#!/usr/bin/env bash
# [Ootomo & Yokota 2023] Table 1 and Fig. 2, computed by `tcnla analyze formats` (no GPU needed):
#   bench/results/ootomo2023_table1.csv, ootomo2023_fig2.csv, ootomo2023_fig2.png
#   bash bench/reproduce/ootomo2023_table1_fig2.sh [path/to/tcnla]
set -eu
bin=${1:-build/tcnla}
res=bench/results
mkdir -p "$res"
"$bin" analyze formats --csv >"$res/ootomo2023_table1.csv"
"$bin" analyze formats --variance-sweep >"$res/ootomo2023_fig2.csv"
python3 - "$res" <<'PY'
import csv, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
res = sys.argv[1]
rows = list(csv.DictReader(open(res + "/ootomo2023_fig2.csv")))
fig, ax = plt.subplots(figsize=(6.5, 4))
for x in sorted({r["x"] for r in rows}):
    rr = [r for r in rows if r["x"] == x]
    ax.semilogy[int(r["y"] for r in rr], [float(r["one_minus_variance"]) for r in rr], "o-", label="e%sm*" % x)
ax.set_xlabel("fraction bits Y")
ax.set_ylabel("1 - variance of RN(g), g ~ N(0,1)")
ax.set_title("[Ootomo & Yokota 2023] Fig. 2, computed")
ax.legend()
fig.tight_layout()
fig.savefig(res + "/ootomo2023_fig2.png", dpi=120)
print("wrote", res + "/ootomo2023_fig2.png")
PY
