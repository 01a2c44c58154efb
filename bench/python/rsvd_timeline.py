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
  rsvd_timeline_host.csv     gpu,spectrum,method,call,at_us,gap_us,launch_us,call_us,api
                             (with --host: for each gap over 20 us, the CUDA
                             runtime and driver calls over 2 us that the host
                             made between launching the operation before the
                             gap and the one after it: launch_us how long after
                             the first launch each began, call_us its length)

  python bench/python/rsvd_timeline.py [--out OUTDIR] [--m M] [--n N] [--k K]
      [--spectra exp,deep_decay,...] [--calls C] [--host]

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


API = ("cuda_runtime", "cuda_driver")


def timeline(fn, host=False):
    """Profile one call of fn; the device operations as (start, dur, name,
    correlation) with start relative to the first one, in us, and the host's
    runtime / driver calls as (start, dur, name, correlation) on that clock
    (host: with the profiler's CPU activity too)."""
    acts = [ProfilerActivity.CPU, ProfilerActivity.CUDA] if host else [ProfilerActivity.CUDA]
    with profile(activities=acts) as pr:
        fn()
        torch.cuda.synchronize()
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "trace.json")
        pr.export_chrome_trace(path)
        with open(path) as f:
            events = json.load(f)["traceEvents"]
    def pick(cats):
        return sorted((e["ts"], e["dur"], e["name"], e.get("args", {}).get("correlation"))
                      for e in events if e.get("ph") == "X" and e.get("cat") in cats)

    ops, api = pick(OPS), pick(API)
    if not ops:
        raise RuntimeError("the profiler recorded no device operations")
    t0 = ops[0][0]
    return [(s - t0, d, n, c) for s, d, n, c in ops], [(s - t0, d, n, c) for s, d, n, c in api]


def host_between(gap, api):
    """The runtime / driver calls over 2 us between the launches of the
    operations on either side of gap (at, length, after, before, after's
    correlation, before's): (launch offset, duration, name)"""
    launch = {c: s for s, _, _, c in api if c is not None}
    a, b = launch.get(gap[4]), launch.get(gap[5])
    if a is None or b is None:
        return []
    return [(s - a, d, n) for s, d, n, _ in api if a <= s <= b and d > 2]


def analyse(ops):
    """busy, the gaps (at, length, after, before, after's correlation,
    before's) between runs of overlapping operations, and the span"""
    busy, gaps = 0.0, []
    cur_s, cur_e, last = ops[0][0], ops[0][0] + ops[0][1], ops[0][2:4]
    for s, d, n, c in ops[1:]:
        if s > cur_e:
            busy += cur_e - cur_s
            gaps.append((s, s - cur_e, last[0], n, last[1], c))
            cur_s, cur_e = s, s + d
        else:
            cur_e = max(cur_e, s + d)
        last = (n, c) if s + d >= cur_e else last
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
    ap.add_argument("--host", action="store_true",
                    help="also rsvd_timeline_host.csv: the host's calls in each gap over 20 us")
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
             for x in ("", "_kernels", "_gaps") + (("_host",) if a.host else ())}
    w = {x: csv.writer(f) for x, f in files.items()}
    w[""].writerow(["gpu", "spectrum", "method", "call", "span_us", "busy_us", "idle_us",
                    "idle_after_d2h_us", "gaps", "gaps_over_3us", "ops"])
    w["_kernels"].writerow(["gpu", "spectrum", "method", "call", "op", "total_us", "count"])
    w["_gaps"].writerow(["gpu", "spectrum", "method", "call", "at_us", "gap_us", "after", "before"])
    if a.host:
        w["_host"].writerow(["gpu", "spectrum", "method", "call", "at_us", "gap_us", "launch_us",
                             "call_us", "api"])
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
                ops, api = timeline(f, a.host)
                busy, gaps, end = analyse(ops)
                idle = end - busy
                d2h = sum(g[1] for g in gaps if "DtoH" in g[2])
                big = [x for x in gaps if x[1] > 3]
                w[""].writerow([gpu, name, meth, call, f"{end:.1f}", f"{busy:.1f}", f"{idle:.1f}",
                                f"{d2h:.1f}", len(gaps), len(big), len(ops)])
                by = collections.defaultdict(lambda: [0.0, 0])
                for _, d, n, _ in ops:
                    by[n][0] += d
                    by[n][1] += 1
                for n, (t, c) in sorted(by.items(), key=lambda x: -x[1][0]):
                    w["_kernels"].writerow([gpu, name, meth, call, n[:120], f"{t:.1f}", c])
                for x in big:
                    at, g, after, before = x[:4]
                    w["_gaps"].writerow([gpu, name, meth, call, f"{at:.1f}", f"{g:.1f}",
                                         after[:80], before[:80]])
                    if a.host and g > 20:
                        for off, d, n in host_between(x, api):
                            w["_host"].writerow([gpu, name, meth, call, f"{at:.1f}", f"{g:.1f}",
                                                 f"{off:.1f}", f"{d:.1f}", n[:60]])
                print(f"{name:10s} {meth:13s} call {call}: span {end:7.0f} us, busy {busy:7.0f}, "
                      f"idle {idle:5.0f} ({d2h:4.0f} after reads to the host), "
                      f"{len(big)} gaps over 3 us, {len(ops)} ops", flush=True)
        del A
        torch.cuda.empty_cache()
    for f in files.values():
        f.close()


if __name__ == "__main__":
    main()
