"""The randomized SVD across spectra, tcnla beside torch.svd_lowrank on the
same CUDA tensors in one process: for each spectrum, A = U diag(s) V^T
(U, V with r orthonormal columns from the QR of Gaussian matrices, so the
singular values are known), then

  torch_svd_lowrank   torch.svd_lowrank(A, q=k+p, niter=q_iters), FP32, TF32 off
  tcnla_default       tcnla.rsvd(A, k) with the library's defaults
  tcnla_tcec_power    the defaults with the power iterations in TCEC_FP16
  tcnla_fastest       every product in FP16 (proj_method = gemm_method = 'fp16')
  tcnla_fastest_pe    the same with pass_efficient=True (2q + 1 passes over A)

CUDA-event times (median of --reps after a warm-up), the relative residual
||A - U_k S_k V_k^T||_F / ||A||_F, and sv_maxrel = max_i |S_i - s_i| / s_i
over the top k (the nonzero ones) against the known spectrum. Spectra (s_1 = 1):

  exp        s_i = 10^(-3 i / k)                (s_k = 1e-3)
  poly_slow  s_i = (i + 1)^-0.5
  gap_noise  s_i = 1 for i < k / 2, then 1e-2, plus a floor of 1e-4
  deep_decay s_i = 10^(-8 i / k)                (s_k = 1e-8: below FP16's resolution
                                                 inside the top k)
  low_rank   s_i = 10^(-2 i / r0) for i < r0 = k / 2, then 0

CSV (one row per method and spectrum) to OUTDIR/rsvd_spectra_peers.csv:
  gpu,method,spectrum,m,n,k,p,q,seconds,rel_err,optimal,sv_maxrel,power

  python bench/python/rsvd_spectra.py [--out OUTDIR] [--m M] [--n N] [--k K] [--reps R]
"""

import argparse
import csv
import os

import torch

import tcnla
from bench_python import cuda_time, residual  # (the same timing and residual as there)

FIELDS = ["gpu", "method", "spectrum", "m", "n", "k", "p", "q", "seconds", "rel_err", "optimal",
          "sv_maxrel", "power"]


def spectrum(name, r, k):
    i = torch.arange(r, device="cuda", dtype=torch.float64)
    if name == "exp":
        return torch.pow(10.0, -3.0 * i / k)
    if name == "poly_slow":
        return (i + 1) ** -0.5
    if name == "gap_noise":
        return torch.where(i < k // 2, torch.ones_like(i), torch.full_like(i, 1e-2)) + 1e-4
    if name == "deep_decay":
        return torch.pow(10.0, -8.0 * i / k)
    if name == "low_rank":
        r0 = k // 2
        return torch.where(i < r0, torch.pow(10.0, -2.0 * i / r0), torch.zeros_like(i))
    raise ValueError(name)


def test_matrix(m, n, k, name, seed=0):
    r = min(2 * k + 512, m, n)
    g = torch.Generator(device="cuda").manual_seed(seed)
    U, _ = torch.linalg.qr(torch.randn(m, r, device="cuda", generator=g))
    V, _ = torch.linalg.qr(torch.randn(n, r, device="cuda", generator=g))
    s = spectrum(name, r, k)
    A = ((U * s.float()) @ V.T).contiguous()
    opt = float(torch.sqrt(torch.sum(s[k:] ** 2)) / torch.sqrt(torch.sum(s ** 2)))
    return A, s[:k], opt


def sv_maxrel(S, s, k):
    """over the top k singular values that are not zero (low_rank's are, past r0)"""
    s = s[:k]
    nz = s > 0
    return float(torch.max(torch.abs(S[:k].double()[nz] - s[nz]) / s[nz]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument("--m", type=int, default=16384)
    ap.add_argument("--n", type=int, default=16384)
    ap.add_argument("--k", type=int, default=256)
    ap.add_argument("--p", type=int, default=10)
    ap.add_argument("--q", type=int, default=2)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--spectra", default="exp,poly_slow,gap_noise,deep_decay,low_rank")
    a = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    gpu = torch.cuda.get_device_name()
    m, n, k, p, q = a.m, a.n, a.k, a.p, a.q
    rows = []
    for name in a.spectra.split(","):
        A, s, opt = test_matrix(m, n, k, name)
        runs = {
            "torch_svd_lowrank": lambda: torch.svd_lowrank(A, q=k + p, niter=q),
            "tcnla_default": lambda: tcnla.rsvd(A, k, oversampling=p, power_iters=q,
                                                return_info=True),
            "tcnla_tcec_power": lambda: tcnla.rsvd(A, k, oversampling=p, power_iters=q,
                                                   power_method="tcec_fp16", return_info=True),
            "tcnla_fastest": lambda: tcnla.rsvd(A, k, oversampling=p, power_iters=q,
                                                proj_method="fp16", gemm_method="fp16",
                                                return_info=True),
            "tcnla_fastest_pe": lambda: tcnla.rsvd(A, k, oversampling=p, power_iters=q,
                                                   proj_method="fp16", gemm_method="fp16",
                                                   pass_efficient=True, return_info=True),
        }
        if q < 1:  # (2q + 1 passes need a power iteration: no row under that name)
            del runs["tcnla_fastest_pe"]
        for meth, fn in runs.items():
            t = cuda_time(fn, a.reps)
            out = fn()
            power = ""  # the power iterations' method as it ran (tcnla)
            if meth == "torch_svd_lowrank":
                U, S, V = out
            else:
                U, S, Vt, info = out
                V = Vt.T
                if meth == "tcnla_default":  # the projection's and the power iterations'
                    # methods as chosen (Info.proj_method, Info.power_method)
                    power = f"auto:{info.power_method} (projection {info.proj_method})"
                else:
                    power = "tcec_fp16" if meth == "tcnla_tcec_power" else "fp16"
            res = residual(A, U, S, V, k)
            row = dict(gpu=gpu, method=meth, spectrum=name, m=m, n=n, k=k, p=p, q=q,
                       seconds=f"{t:.6e}", rel_err=f"{res:.6e}", optimal=f"{opt:.6e}",
                       sv_maxrel=f"{sv_maxrel(S, s, k):.3e}", power=power)
            rows.append(row)
            print(f"{name:10s} {meth:18s} {t * 1e3:8.2f} ms  residual {res:.6e} "
                  f"(optimal {opt:.6e})  sv_maxrel {row['sv_maxrel']}  {power}", flush=True)
        del A
        torch.cuda.empty_cache()
    os.makedirs(a.out, exist_ok=True)
    path = os.path.join(a.out, "rsvd_spectra_peers.csv")
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, FIELDS)
        w.writeheader()
        w.writerows(rows)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
