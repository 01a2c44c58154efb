#!/usr/bin/env python3
"""Unmodified PyTorch FP32 work, timed: bench/interpose/run.sh runs this
script twice, without and with LD_PRELOAD=libtcnla_cublas.so, and merges the
JSON lines it prints (one per op: program, op, m, n, k, seconds, rel_err).

  torch.matmul  8192^3 FP32, TF32 off         -> cublasSgemm_v2
  torch.bmm     32 x 1024^3                    -> cublasSgemmStridedBatched
  nn.Linear     8192 x 4096 -> 4096 with bias  -> cublasLtMatmul (BIAS epilogue)
  MLP training  200 SGD steps, 1024-2048-2048-10, batch 512 (loss curve to --loss)

rel_err: relative Frobenius error against the same product in FP64
(run.sh sets TCNLA_CUBLAS_FP64=native, so the FP64 references are cuBLAS
DGEMM in both runs); for the training run, the relative difference of the
final loss from the same training in FP64. seconds: best of --reps (CUDA
events); the training run: its 200 steps, once."""
import argparse
import json
import math

import torch
import torch.nn.functional as F


def tf32_off():
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")


def best_seconds(fn, reps, warmup=3):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    best = math.inf
    for _ in range(reps):
        s = torch.cuda.Event(enable_timing=True)
        e = torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        best = min(best, s.elapsed_time(e) * 1e-3)
    return best


def rel_err(x, ref):
    return ((x.double() - ref).norm() / ref.norm()).item()


def row(op, m, n, k, seconds, err):
    return {"program": "pytorch", "op": op, "m": m, "n": n, "k": k,
            "seconds": seconds, "rel_err": err}


def mlp(dtype, steps, X, Y):
    torch.manual_seed(1)
    model = torch.nn.Sequential(
        torch.nn.Linear(1024, 2048), torch.nn.ReLU(),
        torch.nn.Linear(2048, 2048), torch.nn.ReLU(),
        torch.nn.Linear(2048, 10)).cuda().to(dtype)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    losses = []
    torch.cuda.synchronize()
    s = torch.cuda.Event(enable_timing=True)
    e = torch.cuda.Event(enable_timing=True)
    s.record()
    for step in range(steps):
        b = (step * 512) % X.shape[0]
        x, y = X[b:b + 512].to(dtype), Y[b:b + 512]
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    e.record()
    e.synchronize()
    return losses, s.elapsed_time(e) * 1e-3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True, help="JSON lines appended here")
    ap.add_argument("--loss", help="CSV of the training run's loss curves (step, fp32, fp64)")
    ap.add_argument("--n", type=int, default=8192)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--steps", type=int, default=200)
    a = ap.parse_args()
    tf32_off()
    torch.manual_seed(0)
    rows = []
    n = a.n
    A = torch.randn(n, n, device="cuda")
    B = torch.randn(n, n, device="cuda")
    t = best_seconds(lambda: torch.matmul(A, B), a.reps)
    rows.append(row("torch.matmul", n, n, n, t, rel_err(torch.matmul(A, B), A.double() @ B.double())))
    del A, B
    Ab = torch.randn(32, 1024, 1024, device="cuda")
    Bb = torch.randn(32, 1024, 1024, device="cuda")
    t = best_seconds(lambda: torch.bmm(Ab, Bb), a.reps)
    rows.append(row("torch.bmm x32", 1024, 1024, 1024, t,
                    rel_err(torch.bmm(Ab, Bb), torch.bmm(Ab.double(), Bb.double()))))
    del Ab, Bb
    lin = torch.nn.Linear(4096, 4096).cuda()
    x = torch.randn(8192, 4096, device="cuda")
    with torch.no_grad():
        t = best_seconds(lambda: lin(x), a.reps)
        ref = x.double() @ lin.weight.double().t() + lin.bias.double()
        rows.append(row("nn.Linear+bias", 8192, 4096, 4096, t, rel_err(lin(x), ref)))
    del lin, x, ref
    # the training run: a teacher's labels on fixed inputs
    g = torch.Generator(device="cuda").manual_seed(3)
    X = torch.randn(8192, 1024, device="cuda", generator=g)
    Y = (X @ torch.randn(1024, 10, device="cuda", generator=g, dtype=torch.float64).float()).argmax(1)
    l32, t32 = mlp(torch.float32, a.steps, X, Y)
    l64, _ = mlp(torch.float64, a.steps, X, Y)
    rows.append(row("mlp_train_%d" % a.steps, 512, 2048, 1024, t32,
                    abs(l32[-1] - l64[-1]) / abs(l64[-1])))
    if a.loss:
        with open(a.loss, "w") as f:
            f.write("step,loss_fp32,loss_fp64\n")
            for i, (p, q) in enumerate(zip(l32, l64)):
                f.write("%d,%.9g,%.9g\n" % (i, p, q))
    with open(a.out, "a") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
            print(json.dumps(r), flush=True)


if __name__ == "__main__":
    main()
