#!/usr/bin/env python3
"""Fits the constants of the Ozaki AUTO mode's cost model (src/gemm/ozaki_auto.c)
to bench_ozaki rows (bench/ozaki/auto_sweep.sh) and prints the ARCHS[] entry.

    python3 bench/ozaki/fit_auto.py auto_sweep.csv [--arch 90] [--margin 1.03]

The model (see ozaki_auto.c), f(x, h) = x / (x + h), N moduli, e bytes/element:
  native  t0_nat + 2mnk / (R f(m,h) f(n,h) f(k,h))
  scheme  t0_oz + N 2mnk / (R_i8 f(m,h_i8) f(n,h_i8) f(k,h_i8)) + bytes / BW
          bytes = 2e(mk + kn) + N(mk + kn) + 8Nmn + e mn
Fitted by least squares of log(predicted / measured) over a grid of the
half-efficiency dimensions and fixed costs (for each grid point the rates
follow from a linear least-squares fit). The scheme's fit uses the moduli
count each row measured; the slack is the one that makes the model's DP rule
give the median measured count. Then, with the fitted table: every shape's
measured native and scheme times, the model's choice, and whether the choice
was the faster one (within 3%); the AUTO rows against cuBLAS (the "never
slower than native" check). numpy only.
"""
import argparse
import csv
import math
import sys
from collections import defaultdict

import numpy as np

MODULI = [256, 255, 253, 251, 247, 241, 239, 233, 229, 227,
          223, 217, 211, 199, 197, 193, 191, 181, 179, 173]


def log2p(n):
    P = 1
    for p in MODULI[:n]:
        P *= p
    return P.bit_length() - 1


def moduli(bits_out, slack):
    p = 24 if bits_out == 32 else 53
    need = 2 * (p + 3) + slack
    n = 1
    while n < len(MODULI) and log2p(n) - 2 < need:
        n += 1
    return n


def eff(x, h):
    return x / (x + h)


def load(path):
    rows = []
    with open(path) as f:
        for r in csv.DictReader(f):
            try:
                r["m"], r["n"], r["k"] = int(r["m"]), int(r["n"]), int(r["k"])
                r["seconds"] = float(r["seconds"])
            except (KeyError, ValueError):
                continue
            rows.append(r)
    return rows


def geo(lo, hi, num):
    return np.exp(np.linspace(math.log(lo), math.log(hi), num))


def fit_native(shapes, times):
    m, n, k = (np.array(x, float) for x in zip(*shapes))
    t = np.array(times)
    fl = 2 * m * n * k
    best = None
    for h in geo(4, 2048, 60):
        X = fl / (eff(m, h) * eff(n, h) * eff(k, h))
        for t0 in np.concatenate(([0.0], geo(1e-6, 2e-4, 30))):
            y = t - t0
            if np.any(y <= 0):
                continue
            # t - t0 = X / R: weighted (relative) least squares for 1/R
            inv = np.sum(X * y / t**2) / np.sum(X * X / t**2)
            if inv <= 0:
                continue
            err = np.sum(np.log((t0 + X * inv) / t) ** 2)
            if best is None or err < best[0]:
                best = (err, 1 / inv, h, t0)
    return best


def fit_scheme(shapes, nmod, times, e):
    m, n, k = (np.array(x, float) for x in zip(*shapes))
    N = np.array(nmod, float)
    t = np.array(times)
    fl = 2 * m * n * k
    Y = 2 * e * (m * k + k * n) + N * (m * k + k * n) + 8 * N * m * n + e * m * n
    best = None
    for h in geo(4, 4096, 50):
        X = N * fl / (eff(m, h) * eff(n, h) * eff(k, h))
        for t0 in np.concatenate(([0.0], geo(1e-5, 3e-3, 40))):
            y = t - t0
            if np.any(y <= 0):
                continue
            W = 1 / t
            A = np.stack([X * W, Y * W], axis=1)
            sol, *_ = np.linalg.lstsq(A, y * W, rcond=None)
            a, b = sol
            if a <= 0 or b <= 0:  # one term alone
                cands = []
                for (xa, xb) in ((X, 0 * X), (0 * Y, Y)):
                    den = np.sum((xa + xb) ** 2 * W**2)
                    c = np.sum((xa + xb) * y * W**2) / den
                    cands.append((c, xa, xb))
                c, xa, xb = min(cands, key=lambda q: np.sum(((q[1] + q[2]) * q[0] - y) ** 2 * W**2))
                if c <= 0:
                    continue
                a = c if np.any(xa) else 1e-30
                b = c if np.any(xb) else 1e-30
            pred = t0 + a * X + b * Y
            err = np.sum(np.log(pred / t) ** 2)
            if best is None or err < best[0]:
                best = (err, 1 / a, h, 1 / b, t0)
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("csv")
    ap.add_argument("--arch", type=int, default=90)
    ap.add_argument("--margin", type=float, default=1.03)
    ap.add_argument("--slack", type=int, default=None,
                    help="DP-rule bits beyond 2 (p + 3) for the choices (default: from the "
                         "median measured moduli count)")
    a = ap.parse_args()
    rows = load(a.csv)
    if not rows:
        sys.exit(f"{a.csv}: no rows")
    gpus = sorted({r["gpu"] for r in rows})
    print(f"# {a.csv}: {len(rows)} rows, GPU(s): {', '.join(gpus)}")
    res = {}
    for bits, pre, nat_name in ((64, "", "cublas_dgemm"), (32, "sgemm_", "sgemm_cublas")):
        nat = defaultdict(list)
        dp = defaultdict(list)
        auto = defaultdict(list)
        for r in rows:
            key = (r["m"], r["n"], r["k"], r["phi"])
            if r["method"] == nat_name:
                nat[key].append(r["seconds"])
            elif r["method"] == pre + "ozaki_int8_crt" and r["mode"] == "DP":
                try:
                    dp[key].append((r["seconds"], int(r["slices"])))
                except ValueError:
                    pass
            elif r["method"] == pre + "ozaki_int8_crt" and r["mode"] == "AUTO":
                auto[key].append((r["seconds"], r["slices"]))
        if not nat or not dp:
            print(f"# FP{bits}: no native / DP rows, skipped")
            continue
        nk = sorted(nat)
        fn = fit_native([x[:3] for x in nk], [min(nat[x]) for x in nk])
        dk = sorted(dp)
        fs = fit_scheme([x[:3] for x in dk], [min(dp[x])[1] for x in dk],
                        [min(dp[x])[0] for x in dk], 8.0 if bits == 64 else 4.0)
        med = int(np.median([min(dp[x])[1] for x in dk]))
        slack = 0
        while moduli(bits, slack) < med and slack < 40:
            slack += 1
        if a.slack is not None:
            slack = a.slack
        res[bits] = (fn, fs, slack)
        print(f"# FP{bits}: native R = {fn[1]:.3g} FLOP/s, h = {fn[2]:.0f}, t0 = {fn[3]:.2g} s "
              f"(rms log error {math.sqrt(fn[0] / len(nk)):.3f})")
        print(f"# FP{bits}: scheme  R_i8 = {fs[1]:.3g} OP/s, h_i8 = {fs[2]:.0f}, BW = {fs[3]:.3g} B/s, "
              f"t0 = {fs[4]:.2g} s (rms log error {math.sqrt(fs[0] / len(dk)):.3f}); "
              f"median moduli {med} -> slack {slack}")
        # choices with the fitted constants
        print(f"# FP{bits}: shape, phi, native s, DP s (moduli), model native s, model DP s, "
              f"choice, right?, AUTO s, AUTO / native")
        wrong = 0
        worst = 0.0
        for key in sorted(set(nat) & set(dp)):
            m, n, k, phi = key
            tn, (td, nm) = min(nat[key]), min(dp[key])
            e = 8.0 if bits == 64 else 4.0
            N = moduli(bits, slack)
            fl = 2.0 * m * n * k
            pn = fn[3] + fl / (fn[1] * eff(m, fn[2]) * eff(n, fn[2]) * eff(k, fn[2]))
            by = 2 * e * (m * k + k * n) + N * (m * k + k * n) + 8 * N * m * n + e * m * n
            pd = fs[4] + N * fl / (fs[1] * eff(m, fs[2]) * eff(n, fs[2]) * eff(k, fs[2])) + by / fs[3]
            native = not (pd * a.margin < pn)
            chosen = tn if native else td
            ok = chosen <= 1.03 * min(tn, td)
            wrong += not ok
            at = ""
            if key in auto:
                ts, _ = min(auto[key])
                worst = max(worst, ts / tn)
                at = f"{ts:.4g} {ts / tn:.3f}"
            print(f"{m}x{n}x{k} {phi} {tn:.4g} {td:.4g} ({nm}) {pn:.4g} {pd:.4g} "
                  f"{'native' if native else 'scheme'} {'ok' if ok else 'WRONG'} {at}")
        print(f"# FP{bits}: {wrong} choices more than 3% slower than the faster; "
              + (f"AUTO / cuBLAS at most {worst:.3f} (measured AUTO rows)" if auto
                 else "no AUTO rows"))
    if 64 in res:
        fn, fs, slack = res[64]
        f32 = res.get(32)
        r32, h32 = (f32[0][1], f32[0][2]) if f32 else (0.87 * fn[1], fn[2])
        print("\n/* ARCHS[] entry (src/gemm/ozaki_auto.c), fitted by bench/ozaki/fit_auto.py "
              f"to {a.csv} ({', '.join(gpus)}) */")
        print(f"    {{{a.arch}, {fn[1]:.3g}, {fn[2]:.0f}.0, {r32:.3g}, {h32:.0f}.0, {fn[3]:.2g}, "
              f"{fs[1]:.3g}, {fs[2]:.0f}.0, {fs[3]:.3g}, {max(fs[4], 1e-6):.2g}, {a.margin}}},")
        print(f"/* OZ_AUTO_SLACK {slack} (FP64){'' if not f32 else f', {f32[2]} (FP32)'}: "
              "one value for both; the larger (more moduli, more products given to the "
              "native GEMM) is the conservative one */")


if __name__ == "__main__":
    main()
