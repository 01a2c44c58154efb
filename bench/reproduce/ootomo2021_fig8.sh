#!/usr/bin/env bash
# [Ootomo & Yokota 2021] Fig. 8: accuracy of the error-corrected SGEMMs for inputs of
# different exponent ranges (exp_rand(a, b), [Ootomo & Yokota 2021] section 4.1), mean of
# 8 seeds (4 on the GPU), against NATIVE_FP32 on the same inputs, with `tcnla gemm --json`:
#   bench/results/ootomo2021_fig8.csv, ootomo2021_fig8.png
#   bash bench/reproduce/ootomo2021_fig8.sh [backend: auto|cpu|cuda] [path/to/tcnla]
# On the CPU the Tensor Core methods run on the model: small sizes only.
set -eu
backend=${1:-auto}
bin=${2:-build/tcnla}
res=bench/results
mkdir -p "$res"
out=$res/ootomo2021_fig8.csv
# one process per run (a CUDA context each) and an FP64 host reference: keep it modest
if [ "$backend" = cpu ]; then m=64; ks="256 1024 4096"; seeds="1 2 3 4 5 6 7 8";
else m=512; ks="256 1024 4096 16384"; seeds="1 2 3 4"; fi
echo "backend,device,method,dist_a,dist_b,m,k,seed,rel_err,native_fp32_rel_err,status" >"$out"
pairs="exp_rand:-15:15,exp_rand:-15:15 exp_rand:-15:15,exp_rand:-35:-15 exp_rand:-45:-35,exp_rand:-15:15"
for pair in $pairs; do
  da=${pair%,*}; db=${pair#*,}
  for meth in markidis_fp16 tcec_fp16 tcec_tf32; do
    for k in $ks; do
      for seed in $seeds; do
        j=$("$bin" gemm --backend "$backend" --method "$meth" --m $m --n $m --k "$k" \
              --dist "$da" --dist-b "$db" --seed $seed --json 2>/dev/null) && st=0 || st=$?
        if [ $st -eq 0 ]; then
          python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print("%s,%s,%s,%s,%s,%d,%d,%d,%.6e,%.6e,ok"%(d["backend"],d["device"],d["method"],d["dist_a"],d["dist_b"],d["m"],d["k"],d["seed"],d["rel_err"],d["native_fp32_rel_err"]))' "$j" >>"$out"
        else
          echo "$backend,,$meth,$da,$db,$m,$k,$seed,,,exit$st" >>"$out"
        fi
      done
    done
  done
done
python3 - "$out" "$res/ootomo2021_fig8.png" <<'PY'
import csv, sys
from collections import defaultdict
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
rows = list(csv.DictReader(open(sys.argv[1])))
pairs = []
for r in rows:
    p = (r["dist_a"], r["dist_b"])
    if p not in pairs:
        pairs.append(p)
fig, axs = plt.subplots(1, len(pairs), figsize=(5 * len(pairs), 4), sharey=True)
dev = next((r["device"] for r in rows if r["device"]), "?")
for ax, p in zip(axs, pairs):
    acc = defaultdict(list)
    nat = defaultdict(list)
    failed = set()
    for r in rows:
        if (r["dist_a"], r["dist_b"]) != p:
            continue
        if r["status"] != "ok":
            failed.add(r["method"])
            continue
        acc[(r["method"], int(r["k"]))].append(float(r["rel_err"]))
        nat[int(r["k"])].append(float(r["native_fp32_rel_err"]))
    ks = sorted(nat)
    ax.loglog(ks, [sum(nat[k]) / len(nat[k]) for k in ks], "k--o", label="native FP32 (SGEMM)")
    colors = {"markidis_fp16": "tab:red", "tcec_fp16": "tab:orange", "tcec_tf32": "tab:green"}
    for meth in sorted({m for m, _ in acc}):
        kk = sorted(k for m, k in acc if m == meth)
        ax.loglog(kk, [sum(acc[(meth, k)]) / len(acc[(meth, k)]) for k in kk], "o-",
                  color=colors.get(meth), label=meth)
    ax.set_xticks(ks, [str(k) for k in ks])
    ax.minorticks_off()
    ax.legend(fontsize=8)
    title = "A %s, B %s" % p
    if failed:
        title += "\nrange error reported: " + ", ".join(sorted(failed))
    ax.set_title(title, fontsize=9)
    ax.set_xlabel("k")
axs[0].set_ylabel("relative Frobenius error (mean over seeds)")
fig.suptitle("[Ootomo & Yokota 2021] Fig. 8 on %s" % dev)
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=120)
print("wrote", sys.argv[2])
PY
