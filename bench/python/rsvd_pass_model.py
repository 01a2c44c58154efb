"""How many passes over A the randomized SVD's accuracy needs: an exact-arithmetic
model (NumPy, FP64) of two ways to spend the passes, on the spectra of
bench/rsvd.c (A = U diag(s) V^T, U and V with r = min(m, n, 4k + 64) orthonormal
columns, s_1 = 1), with Gaussian Omega (n x l, l = k + p):

  standard        Q = orth(A Omega); q times: W = orth(A^T Q), Q = orth(A W);
                  then B = Q^T A and A ~ Q B ([Halko et al. 2011] Alg. 4.4,
                  tcnla_rsvd's scheme): 2q + 2 passes, Q spans
                  (A A^T)^q A Omega (the singular values raised to 2q + 1)
  pass_efficient  the same, but the last iteration ends after Y = A W (W
                  orthonormal): A ~ Y W^T = Q2 (Q2^T Y) W^T with Q2 = orth(Y)
                  [Bjarkason 2019]: 2q + 1 passes, W spans (A^T A)^q Omega
                  (the values raised to 2q)

then the rank-k truncation of the SVD of the small factor. The residual
||A - U_k S_k V_k^T||_F / ||A||_F is computed from the factors (U^T U_k,
V^T V_k), exactly up to FP64 rounding of its square, so spectra whose residual
lies near 1e-8 (deep_decay, low_rank) are not modelled here: their accuracy is
set by the GPU's FP32 / FP16 rounding, which bench_rsvd measures. The model has
no Tensor Core rounding: it isolates what the pass count costs.

CSV (one row per spectrum, scheme, q and seed) to OUTDIR/rsvd_pass_model.csv:
  spectrum,m,n,k,p,scheme,q,passes,seed,rel_err,optimal,ratio

  python bench/python/rsvd_pass_model.py [--out OUTDIR] [--m M] [--n N] [--k K] [--p P]
      [--spectra exp,poly_slow,gap_noise] [--seeds S]
"""

import argparse
import csv
import os
import sys

import numpy as np

FIELDS = ["spectrum", "m", "n", "k", "p", "scheme", "q", "passes", "seed", "rel_err", "optimal",
          "ratio"]
# (scheme, q): passes 4, 5, 6, 7
RUNS = [("standard", 1), ("pass_efficient", 2), ("standard", 2), ("pass_efficient", 3)]


def spectrum(name, r, k):
    i = np.arange(r, dtype=np.float64)
    if name == "exp":
        return 10.0 ** (-3.0 * i / k)
    if name == "poly_slow":
        return (i + 1.0) ** -0.5
    if name == "gap_noise":
        return np.where(i < k // 2, 1.0, 1e-2) + 1e-4
    raise ValueError(f"unknown spectrum '{name}' (exp, poly_slow, gap_noise)")


def orth(X):
    return np.linalg.qr(X)[0]


def run(U, s, V, k, l, scheme, q, seed):
    """The rank-k factors (Uk, Sk, Vk) of one scheme on A = U diag(s) V^T."""
    def a_times(X):
        return U @ (s[:, None] * (V.T @ X))

    def at_times(X):
        return V @ (s[:, None] * (U.T @ X))

    omega = np.random.default_rng(seed).standard_normal((V.shape[0], l))
    Q = orth(a_times(omega))
    if scheme == "standard":
        for _ in range(q):
            Q = orth(a_times(orth(at_times(Q))))
        Ub, Sb, Vbt = np.linalg.svd(at_times(Q).T, full_matrices=False)  # B = Q^T A
        return Q @ Ub[:, :k], Sb[:k], Vbt[:k].T
    for it in range(q):
        W = orth(at_times(Q))
        Y = a_times(W)
        if it < q - 1:
            Q = orth(Y)
    Q2 = orth(Y)
    Ub, Sb, Vbt = np.linalg.svd(Q2.T @ Y)  # l x l
    return Q2 @ Ub[:, :k], Sb[:k], W @ Vbt[:k].T


def rel_residual(U, s, V, Uk, Sk, Vk):
    """||U diag(s) V^T - Uk diag(Sk) Vk^T||_F / ||s||, U and V orthonormal."""
    a, b = U.T @ Uk, V.T @ Vk
    cross = np.sum(np.sum((a * s[:, None]) * b, axis=0) * Sk)
    n2 = np.sum(s * s)
    return np.sqrt(max(n2 - 2.0 * cross + np.sum(Sk * Sk), 0.0) / n2)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="bench/results", help="output folder (default bench/results)")
    ap.add_argument("--m", type=int, default=16384)
    ap.add_argument("--n", type=int, default=16384)
    ap.add_argument("--k", type=int, default=256)
    ap.add_argument("--p", type=int, default=10)
    ap.add_argument("--spectra", default="exp,poly_slow,gap_noise")
    ap.add_argument("--seeds", type=int, default=2, help="Omegas per spectrum (default 2)")
    a = ap.parse_args(argv)
    if min(a.m, a.n, a.k, a.seeds) < 1 or a.p < 0 or a.k + a.p > min(a.m, a.n):
        ap.error("need m, n, k, seeds >= 1, p >= 0 and k + p <= min(m, n)")
    names = a.spectra.split(",")
    for name in names:  # unknown names fail before the work
        try:
            spectrum(name, 1, 1)
        except ValueError as e:
            ap.error(str(e))
    r = min(a.m, a.n, 4 * a.k + 64)
    g = np.random.default_rng(1)
    U, V = orth(g.standard_normal((a.m, r))), orth(g.standard_normal((a.n, r)))
    os.makedirs(a.out, exist_ok=True)
    path = os.path.join(a.out, "rsvd_pass_model.csv")
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        for name in names:
            s = spectrum(name, r, a.k)
            opt = np.sqrt(np.sum(s[a.k:] ** 2) / np.sum(s ** 2))
            for scheme, q in RUNS:
                for seed in range(a.seeds):
                    res = rel_residual(U, s, V, *run(U, s, V, a.k, a.k + a.p, scheme, q, 100 + seed))
                    passes = 2 * q + 2 if scheme == "standard" else 2 * q + 1
                    row = dict(spectrum=name, m=a.m, n=a.n, k=a.k, p=a.p, scheme=scheme, q=q,
                               passes=passes, seed=seed, rel_err=f"{res:.6e}",
                               optimal=f"{opt:.6e}", ratio=f"{res / opt:.5f}")
                    w.writerow(row)
                    f.flush()
                    print(f"{name:10s} {scheme:15s} q={q} passes={passes} seed={seed}: "
                          f"{res / opt:.5f} x optimal", flush=True)
    print(f"wrote {path}")


if __name__ == "__main__":
    sys.exit(main())
