"""Where a tcnla.rsvd call keeps the GPU busy and where it leaves it idle:
the kernel and copy timeline of single calls, from PyTorch's CUPTI-based
profiler (which records every kernel of the process, the library's and
cuBLAS's / cuSOLVER's included), on the matrices of rsvd_spectra.py
(A = U diag(s) V^T with known s), 16384^2, rank 256, p = 10, q = 2 by
default. Per call:

  span      first kernel's start to the last one's end (us)
  busy      the time some kernel, copy or memset runs (the union of them)
  idle      span - busy: the GPU waiting for the host (launch latency, host
            work between launches, host synchronisations)
  idle_after_d2h  the part of idle in gaps that follow a device-to-host
            copy, i.e. the host's reads of results it decides on

The profiler adds host time to every launch, so span and idle come out
larger than in an unprofiled call (bench_rsvd, rsvd_spectra.py time those);
the kernels' own durations do not change, so busy is what the GPU needs.

Files in OUTDIR (gpu name in each row):
  rsvd_timeline.csv          gpu,spectrum,method,call,span_us,busy_us,idle_us,
                             idle_after_d2h_us,gaps,gaps_over_3us,ops
  rsvd_timeline_kernels.csv  gpu,spectrum,method,call,op,total_us,count
  rsvd_timeline_gaps.csv     gpu,spectrum,method,call,at_us,gap_us,after,before
                             (gaps over 3 us)

  python bench/python/rsvd_timeline.py [--out OUTDIR] [--m M] [--n N] [--k K]
      [--spectra exp,deep_decay,...] [--calls C]

Methods: tcnla_default (the library's defaults) and tcnla_fastest (every
product in FP16: proj_method = gemm_method = 'fp16').
"""

import argparse
import collections
import csv
import json
import os
import sys
import tempfile

import torch
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tcnla  # noqa: E402
from rsvd_spectra import test_matrix  # noqa: E402

SPECTRA = ("exp", "poly_slow", "gap_noise", "deep_decay", "low_rank")

METHODS = {"tcnla_default": {}, "tcnla_fastest": {"proj_method": "fp16", "gemm_method": "fp16"}}
OPS = ("kernel", "gpu_memcpy", "gpu_memset")


def timeline(fn):
    """Profile one call of fn; the device operations as (start, dur, name),
    start relative to the first one, in us."""
    with profile(activities=[ProfilerActivity.CUDA]) as pr:
        fn()
        torch.cuda.synchronize()
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "trace.json")
        pr.export_chrome_trace(path)
        with open(path) as f:
            events = json.load(f)["traceEvents"]
    ops = sorted((e["ts"], e["dur"], e["name"]) for e in events
                 if e.get("ph") == "X" and e.get("cat") in OPS)
    if not ops:
        raise RuntimeError("the profiler recorded no device operations")
    t0 = ops[0][0]
    return [(s - t0, d, n) for s, d, n in ops]


def analyse(ops):
    """busy, the gaps (at, length, after, before) between runs of overlapping
    operations, and the span"""
    busy, gaps = 0.0, []
    cur_s, cur_e, last = ops[0][0], ops[0][0] + ops[0][1], ops[0][2]
    for s, d, n in ops[1:]:
        if s > cur_e:
            busy += cur_e - cur_s
            gaps.append((s, s - cur_e, last, n))
            cur_s, cur_e = s, s + d
        else:
            cur_e = max(cur_e, s + d)
        last = n if s + d >= cur_e else last
    busy += cur_e - cur_s
    return busy, gaps, cur_e


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=".")
    ap.add_argument("--m", type=int, default=16384)
    ap.add_argument("--n", type=int, default=16384)
    ap.add_argument("--k", type=int, default=256)
    ap.add_argument("--spectra", default="exp,deep_decay,gap_noise")
    ap.add_argument("--calls", type=int, default=2, help="profiled calls per method (after 3 unprofiled)")
    a = ap.parse_args()
    spectra = a.spectra.split(",")
    bad = [s for s in spectra if s not in SPECTRA]
    if bad:
        ap.error(f"unknown spectrum {bad[0]} (one of {', '.join(SPECTRA)})")
    if a.m < 1 or a.n < 1 or not 1 <= a.k <= min(a.m, a.n) or a.calls < 1:
        ap.error("need m, n >= 1, 1 <= k <= min(m, n), calls >= 1")
    if not torch.cuda.is_available():
        sys.exit("rsvd_timeline: needs a CUDA device")
    os.makedirs(a.out, exist_ok=True)
    gpu = torch.cuda.get_device_name()
    p, q = 10, 2
    files = {x: open(os.path.join(a.out, f"rsvd_timeline{x}.csv"), "w", newline="")
             for x in ("", "_kernels", "_gaps")}
    w = {x: csv.writer(f) for x, f in files.items()}
    w[""].writerow(["gpu", "spectrum", "method", "call", "span_us", "busy_us", "idle_us",
                    "idle_after_d2h_us", "gaps", "gaps_over_3us", "ops"])
    w["_kernels"].writerow(["gpu", "spectrum", "method", "call", "op", "total_us", "count"])
    w["_gaps"].writerow(["gpu", "spectrum", "method", "call", "at_us", "gap_us", "after", "before"])
    print(f"rsvd_timeline on {gpu}: {a.m} x {a.n}, k {a.k}, p {p}, q {q}", flush=True)
    for name in spectra:
        A, _, _ = test_matrix(a.m, a.n, a.k, name)
        for meth, kw in METHODS.items():
            def f(A=A, kw=kw):
                return tcnla.rsvd(A, a.k, oversampling=p, power_iters=q, **kw)

            for _ in range(3):
                f()
            torch.cuda.synchronize()
            for call in range(a.calls):
                ops = timeline(f)
                busy, gaps, end = analyse(ops)
                idle = end - busy
                d2h = sum(g for _, g, after, _ in gaps if "DtoH" in after)
                big = [x for x in gaps if x[1] > 3]
                w[""].writerow([gpu, name, meth, call, f"{end:.1f}", f"{busy:.1f}", f"{idle:.1f}",
                                f"{d2h:.1f}", len(gaps), len(big), len(ops)])
                by = collections.defaultdict(lambda: [0.0, 0])
                for _, d, n in ops:
                    by[n][0] += d
                    by[n][1] += 1
                for n, (t, c) in sorted(by.items(), key=lambda x: -x[1][0]):
                    w["_kernels"].writerow([gpu, name, meth, call, n[:120], f"{t:.1f}", c])
                for at, g, after, before in big:
                    w["_gaps"].writerow([gpu, name, meth, call, f"{at:.1f}", f"{g:.1f}",
                                         after[:80], before[:80]])
                print(f"{name:10s} {meth:13s} call {call}: span {end:7.0f} us, busy {busy:7.0f}, "
                      f"idle {idle:5.0f} ({d2h:4.0f} after reads to the host), "
                      f"{len(big)} gaps over 3 us, {len(ops)} ops", flush=True)
        del A
        torch.cuda.empty_cache()
    for f in files.values():
        f.close()


if __name__ == "__main__":
    main()
