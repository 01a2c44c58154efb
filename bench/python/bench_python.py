"""tcnla's Python package against PyTorch on the same CUDA tensors, in one
process: tcnla.svd_lowrank vs torch.svd_lowrank (q = k + 10, niter = 2),
tcnla.matmul vs torch.matmul (FP32, TF32 off), CUDA-event times (median of
--reps after a warm-up), relative residuals / errors against an FP64
reference, the extra device memory (PyTorch's allocator peak above the
inputs, tcnla's own peak from tcnla_memory_stats, the drop of
cudaMemGetInfo's free memory), and the Python layer's overhead: the same
tcnla call made through the package and through a bare ctypes call with its
arguments prepared beforehand (and, with --c-csv, bench_rsvd's time of the
same tcnla_rsvd call from C).

CSV rows (gpu name in each) to OUTDIR/python_bench.csv:
  gpu,bench,impl,m,n,k,q,niter,seconds,rel_err,optimal,torch_peak_mib,
  tcnla_peak_mib,memgetinfo_drop_mib,note
and OUTDIR/python_bench.png when matplotlib is present.

  python bench/python/bench_python.py [--out OUTDIR] [--quick] [--reps R] [--c-csv FILE]
"""

import argparse
import csv
import ctypes as C
import gc
import os
import statistics
import sys
import time

import torch

import tcnla
from tcnla import _lib

FIELDS = ["gpu", "bench", "impl", "m", "n", "k", "q", "niter", "seconds", "rel_err", "optimal",
          "torch_peak_mib", "tcnla_peak_mib", "memgetinfo_drop_mib", "note"]
MIB = 1 << 20


def cuda_time(fn, reps):
    """Median seconds of fn() by CUDA events on the current stream (one warm-up),
    with Python's garbage collector paused while timing, as timeit does: a
    collection inside a call that waits on the device (tcnla's read backs)
    leaves the device idle for its duration, milliseconds at times."""
    fn()
    torch.cuda.synchronize()
    ts = []
    was = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        for _ in range(reps):
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            e0.record()
            fn()
            e1.record()
            e1.synchronize()
            ts.append(e0.elapsed_time(e1) / 1e3)
    finally:
        if was:
            gc.enable()
    return statistics.median(ts)


def memory(fn):
    """(torch peak above the current allocation, tcnla peak, cudaMemGetInfo drop) in MiB
    of one call of fn (run after a warm-up elsewhere: tcnla's pool is warm)."""
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    tcnla.reset_peak_memory("cuda")
    free0 = torch.cuda.mem_get_info()[0]
    out = fn()
    torch.cuda.synchronize()
    free1 = torch.cuda.mem_get_info()[0]
    tp = (torch.cuda.max_memory_allocated() - base) / MIB
    del out
    return tp, tcnla.memory_stats("cuda")[1] / MIB, (free0 - free1) / MIB


def test_matrix(m, n, k, r=None, seed=0):
    """A = U diag(s) V^T, rank r = min(2k + 512, m, n), s_i = 10^(-3 i / k)
    (s_k = 1e-3, [Ootomo & Yokota 2023] 5.1.1's exponential decay), FP32."""
    r = r or min(2 * k + 512, m, n)
    g = torch.Generator(device="cuda").manual_seed(seed)
    U, _ = torch.linalg.qr(torch.randn(m, r, device="cuda", generator=g))
    V, _ = torch.linalg.qr(torch.randn(n, r, device="cuda", generator=g))
    s = torch.pow(10.0, -3.0 * torch.arange(r, device="cuda", dtype=torch.float64) / k)
    A = (U * s.float()) @ V.T
    opt = float(torch.sqrt(torch.sum(s[k:] ** 2)) / torch.sqrt(torch.sum(s ** 2)))
    return A.contiguous(), opt


def residual(A, U, S, V, k):
    """||A - U_k S_k V_k^T||_F / ||A||_F (the rank-k truncation), FP32 products, TF32 off."""
    E = A - (U[:, :k] * S[:k]) @ V[:, :k].T
    return float(E.norm() / A.norm())


def bench_svd(rows, gpu, m, n, k, reps, c_rows):
    q = k + 10
    A, opt = test_matrix(m, n, k)
    torch.cuda.synchronize()
    cases = {
        "torch.svd_lowrank": lambda: torch.svd_lowrank(A, q=q, niter=2),
        "tcnla.svd_lowrank": lambda: tcnla.svd_lowrank(A, q=q, niter=2),
        # the library's own form: rank k from k + 10 columns
        "tcnla.rsvd": lambda: tcnla.rsvd(A, k, oversampling=10, power_iters=2),
    }
    for impl, fn in cases.items():
        t = cuda_time(fn, reps)
        mem = memory(fn)
        out = fn()
        if impl == "tcnla.rsvd":
            U, S, Vt = out
            V = Vt.T
        else:
            U, S, V = out
        rows.append(dict(gpu=gpu, bench="svd_lowrank", impl=impl, m=m, n=n, k=k,
                         q=q if impl != "tcnla.rsvd" else k + 10, niter=2, seconds=t,
                         rel_err=residual(A, U, S, V, k), optimal=opt,
                         torch_peak_mib=round(mem[0], 1), tcnla_peak_mib=round(mem[1], 1),
                         memgetinfo_drop_mib=round(mem[2], 1), note="rank-k residual"))
        print(f"{impl:20s} {m}x{n} k={k} q={q}: {t * 1e3:9.2f} ms  residual "
              f"{rows[-1]['rel_err']:.3e} (optimal {opt:.3e})  torch peak +{mem[0]:.0f} MiB, "
              f"tcnla peak {mem[1]:.0f} MiB", flush=True)
        del out, U, S, V
    # the Python layer's overhead: the same tcnla_rsvd call, through the
    # package and through one bare ctypes call with everything prepared
    raw_t, py_t = overhead_rsvd(A, k, reps)
    rows.append(dict(gpu=gpu, bench="overhead_rsvd", impl="tcnla.rsvd (python)", m=m, n=n,
                     k=k, q=k + 10, niter=2, seconds=py_t, note="package call"))
    rows.append(dict(gpu=gpu, bench="overhead_rsvd", impl="tcnla_rsvd (bare ctypes)", m=m,
                     n=n, k=k, q=k + 10, niter=2, seconds=raw_t,
                     note=f"python overhead {100 * (py_t - raw_t) / raw_t:+.2f} %"))
    print(f"overhead rsvd {m}x{n} k={k}: package {py_t * 1e3:.3f} ms, bare call "
          f"{raw_t * 1e3:.3f} ms: {100 * (py_t - raw_t) / raw_t:+.2f} %", flush=True)
    for c in c_rows:
        if (int(c["m"]), int(c["n"]), int(c["k"]), int(c["p"]), int(c["q"])) == (m, n, k, 10, 2):
            ct = float(c["seconds"])
            rows.append(dict(gpu=gpu, bench="overhead_rsvd", impl="tcnla_rsvd (C, bench_rsvd)",
                             m=m, n=n, k=k, q=k + 10, niter=2, seconds=ct,
                             note=f"python package vs C {100 * (py_t - ct) / ct:+.2f} % "
                                  "(bench_rsvd's own matrix)"))
            print(f"  bench_rsvd (C) {ct * 1e3:.3f} ms: package {100 * (py_t - ct) / ct:+.2f} %")


def overhead_rsvd(A, k, reps):
    """(bare ctypes seconds, package seconds) of tcnla_rsvd on A (C order)."""
    m, n = A.shape
    U = torch.empty(m, k, device="cuda")
    S = torch.empty(k, device="cuda")
    Vt = torch.empty(k, n, device="cuda")
    L = _lib.lib()
    h = _lib.get_handle(_lib.BACKEND_CUDA, A.device.index or 0)
    with h.lock:
        h.set_stream(torch.cuda.current_stream().cuda_stream)
    o = L.tcnla_rsvd_opts_default()
    o.rank, o.oversampling, o.power_iters = k, 10, 2
    args = (h.h, C.byref(o), n, m, A.data_ptr(), n, Vt.data_ptr(), n, S.data_ptr(),
            U.data_ptr(), k)
    f = L.tcnla_rsvd

    def raw():
        st = f(*args)
        assert st == 0

    def py():
        tcnla.rsvd(A, k, oversampling=10, power_iters=2)

    # interleaved, so that clocks and the pool see the same conditions
    rt, pt = [], []
    for _ in range(3):
        rt.append(cuda_time(raw, reps))
        pt.append(cuda_time(py, reps))
    return min(rt), min(pt)


def overhead_matmul(rows, gpu, n, reps):
    """Fixed cost per call: the package vs a bare ctypes tcnla_sgemm_ex."""
    a = torch.randn(n, n, device="cuda")
    b = torch.randn(n, n, device="cuda")
    c = torch.empty(n, n, device="cuda")
    L = _lib.lib()
    h = _lib.get_handle(_lib.BACKEND_CUDA, a.device.index or 0)
    with h.lock:
        h.set_stream(torch.cuda.current_stream().cuda_stream)
        L.tcnla_set_range_policy(h.h, 0)
    meth = _lib.gemm_method("tcec_fp16")
    info = _lib.Info()
    args = (h.h, meth, 0, 0, n, n, n, 1.0, b.data_ptr(), n, a.data_ptr(), n, 0.0, c.data_ptr(),
            n, C.byref(info))
    f = L.tcnla_sgemm_ex
    raw = lambda: f(*args)
    py = lambda: tcnla.matmul(a, b)
    it = 200
    res = {}
    for name, fn in (("bare ctypes", raw), ("package", py)):
        fn()
        torch.cuda.synchronize()
        best = float("inf")
        for _ in range(3):
            t0 = time.perf_counter()
            for _ in range(it):
                fn()
            torch.cuda.synchronize()
            best = min(best, (time.perf_counter() - t0) / it)
        res[name] = best
    for name, t in res.items():
        rows.append(dict(gpu=gpu, bench="overhead_matmul", impl=name, m=n, n=n, k=n,
                         seconds=t, note="wall time per call, back to back"))
    d = res["package"] - res["bare ctypes"]
    print(f"overhead matmul {n}^3: package {res['package'] * 1e6:.1f} us, bare ctypes "
          f"{res['bare ctypes'] * 1e6:.1f} us per call: +{d * 1e6:.1f} us "
          f"({100 * d / res['bare ctypes']:+.1f} %)", flush=True)


def bench_matmul(rows, gpu, n, reps):
    torch.backends.cuda.matmul.allow_tf32 = False
    g = torch.Generator(device="cuda").manual_seed(1)
    a = torch.randn(n, n, device="cuda", generator=g)
    b = torch.randn(n, n, device="cuda", generator=g)
    ref = a.double() @ b.double()
    rn = float(ref.norm())
    cases = {
        "torch.matmul (fp32, tf32 off)": lambda: torch.matmul(a, b),
        "tcnla.matmul tcec_fp16": lambda: tcnla.matmul(a, b, method="tcec_fp16"),
        "tcnla.matmul tcec_tf32": lambda: tcnla.matmul(a, b, method="tcec_tf32"),
    }
    for impl, fn in cases.items():
        t = cuda_time(fn, reps)
        mem = memory(fn)
        cc = fn()
        err = float((cc.double() - ref).norm()) / rn
        del cc
        rows.append(dict(gpu=gpu, bench="matmul", impl=impl, m=n, n=n, k=n, seconds=t,
                         rel_err=err, torch_peak_mib=round(mem[0], 1),
                         tcnla_peak_mib=round(mem[1], 1), memgetinfo_drop_mib=round(mem[2], 1),
                         note=f"{2 * n ** 3 / t / 1e12:.1f} TFLOP/s"))
        print(f"{impl:32s} {n}^3: {t * 1e3:8.3f} ms  {2 * n ** 3 / t / 1e12:6.1f} TFLOP/s  "
              f"rel err {err:.3e}  torch peak +{mem[0]:.0f} MiB, tcnla peak {mem[1]:.0f} MiB",
              flush=True)
    del ref


def plot(rows, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    sel = [r for r in rows if r["bench"] in ("svd_lowrank", "matmul")]
    labels = [f"{r['bench']} {r['m']}\n{r['impl']}" for r in sel]
    fig, ax = plt.subplots(figsize=(max(6, len(sel) * 1.1), 4))
    ax.bar(range(len(sel)), [r["seconds"] * 1e3 for r in sel])
    ax.set_xticks(range(len(sel)), labels, rotation=60, ha="right", fontsize=7)
    ax.set_ylabel("ms (CUDA events, median)")
    ax.set_yscale("log")
    ax.set_title(f"tcnla Python package vs PyTorch on {sel[0]['gpu'] if sel else ''}")
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="small sizes only")
    ap.add_argument("--c-csv", default=None, help="bench_rsvd's CSV (C times of tcnla_rsvd)")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("bench_python: no CUDA device", file=sys.stderr)
        return 1
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    gpu = torch.cuda.get_device_name()
    c_rows = []
    if args.c_csv and os.path.exists(args.c_csv):
        with open(args.c_csv) as f:
            c_rows = [r for r in csv.DictReader(f)
                      if r.get("method") == "defaults"]
    rows = []
    svd_sizes = [(4096, 4096, 64)] + ([] if args.quick else [(16384, 16384, 256)])
    for m, n, k in svd_sizes:
        bench_svd(rows, gpu, m, n, k, args.reps, c_rows)
    for n in [2048] + ([] if args.quick else [8192]):
        bench_matmul(rows, gpu, n, args.reps)
    overhead_matmul(rows, gpu, 256, args.reps)
    overhead_matmul(rows, gpu, 1024, args.reps)
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "python_bench.csv")
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: r.get(k, "") for k in FIELDS})
    plot(rows, os.path.join(args.out, "python_bench.png"))
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
