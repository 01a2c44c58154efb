#!/usr/bin/env bash
# [Ootomo & Yokota 2023] Fig. 7: accuracy of randomized SVD when only the projection A*Omega
# changes method (FP32 SGEMM; TF32; SHGEMM-TF32 and SHGEMM-FP16 with an FP16
# Omega), the other steps in FP32, on 4096 x 4096 matrices with linear and
# exponential spectra ([Ootomo & Yokota 2023] 5.1.1, s_p = 1e-3 at p = rank) and on the
# Cauchy matrix after one orthogonal iteration (tcnla gen --kind cauchy;
# expected: SHGEMM-FP16 reports the range problem). Algorithm 1 without power
# iterations, as the paper. N and K in the environment change the size and
# rank. Output: bench/results/ootomo2023_fig7.csv and .png.
#   bash bench/reproduce/ootomo2023_fig7.sh [backend] [path/to/tcnla]
set -eu
backend=${1:-auto}
bin=${2:-build/tcnla}
res=bench/results
mkdir -p "$res"
out=$res/ootomo2023_fig7.csv
n=${N:-4096}; k=${K:-256}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "backend,device,matrix,proj,seed,rank,rel_residual,optimal,status" >"$out"
"$bin" gen --kind cauchy --m $n --n $n --seed 1 --output "$tmp/cauchy.npy" >/dev/null
for mat in linear exp cauchy; do
  for proj in native_fp32 tf32 shgemm_tf32 shgemm_fp16; do
    fmt=fp32; case $proj in shgemm*) fmt=fp16;; esac
    for seed in 1 2; do
      if [ $mat = cauchy ]; then src="--input $tmp/cauchy.npy"; else src="--m $n --n $n --spectrum $mat"; fi
      j=$("$bin" rsvd --backend "$backend" $src --rank $k --proj $proj --gemm native_fp32 \
            --random-format $fmt --power-iters 0 --orth householder --no-baseline --reps 1 --seed $seed --json 2>"$tmp/err") && st=0 || st=$?
      if [ $st -eq 0 ]; then
        python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print("%s,%s,%s,%s,%s,%d,%.6e,%.6e,ok"%(d["backend"],d["device"],sys.argv[2],sys.argv[3],sys.argv[4],d["rank"],d["rel_residual"],d["optimal"]))' "$j" $mat $proj $seed >>"$out"
      else
        echo "$backend,,$mat,$proj,$seed,$k,,,exit$st" >>"$out"
      fi
    done
  done
done
python3 - "$out" "$res/ootomo2023_fig7.png" <<'PY'
import csv, sys
from collections import defaultdict
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
rows = list(csv.DictReader(open(sys.argv[1])))
mats = ["linear", "exp", "cauchy"]
projs = ["native_fp32", "tf32", "shgemm_tf32", "shgemm_fp16"]
fig, axs = plt.subplots(1, 3, figsize=(14, 4))
dev = next((r["device"] for r in rows if r["device"]), "?")
for ax, m in zip(axs, mats):
    vals, labels, colors = [], [], []
    for p in projs:
        rr = [r for r in rows if r["matrix"] == m and r["proj"] == p]
        ok = [float(r["rel_residual"]) for r in rr if r["status"] == "ok"]
        labels.append(p)
        if ok:
            vals.append(sum(ok) / len(ok)); colors.append("tab:blue")
        else:
            vals.append(0); colors.append("white")
            ax.text(len(vals) - 1, 0, "range error\nreported", ha="center", va="bottom", fontsize=8)
    ax.bar(range(len(vals)), vals, color=colors, edgecolor="k")
    opt = [float(r["optimal"]) for r in rows if r["matrix"] == m and r["status"] == "ok" and float(r["optimal"]) > 0]
    if opt:
        ax.axhline(opt[0], color="k", ls="--", lw=1, label="optimal (Eckart-Young)")
        ax.legend(fontsize=8)
    ax.set_xticks(range(len(labels)), labels, rotation=15)
    ax.set_title("%s, rank %s" % (m, rows[0]["rank"]))
    ax.set_yscale("log")
axs[0].set_ylabel("||A - U S V^T||_F / ||A||_F (mean of 2 seeds)")
fig.suptitle("[Ootomo & Yokota 2023] Fig. 7: projection method vs RSVD accuracy, %s" % dev)
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=120)
print("wrote", sys.argv[2])
PY
