#!/usr/bin/env python3
"""Joins the JSON lines of the runs without (NATIVE) and with (TCNLA) the
preload into the CSV gpu, program, op, m, n, k, seconds_native,
seconds_tcnla, rel_err_native, rel_err_tcnla, one row per op found in
both; the speedups (seconds_native / seconds_tcnla) go to stderr.
  merge.py --gpu NAME NATIVE.jsonl TCNLA.jsonl > interpose.csv"""
import argparse
import json
import sys


def load(path):
    rows = {}
    try:
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line.startswith("{"):
                    r = json.loads(line)
                    rows[(r["program"], r["op"], r["m"], r["n"], r["k"])] = r
    except OSError:
        pass
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpu", required=True)
    ap.add_argument("native")
    ap.add_argument("tcnla")
    a = ap.parse_args()
    nat, tc = load(a.native), load(a.tcnla)
    print("gpu,program,op,m,n,k,seconds_native,seconds_tcnla,rel_err_native,rel_err_tcnla")
    for key, r in nat.items():
        if key not in tc:
            continue
        t = tc[key]
        print("%s,%s,%s,%d,%d,%d,%.6e,%.6e,%.4e,%.4e" % (
            a.gpu, r["program"], r["op"], r["m"], r["n"], r["k"], r["seconds"], t["seconds"],
            r["rel_err"], t["rel_err"]))
        sys.stderr.write("%-8s %-16s %5d %5d %5d  speedup %.2fx  rel_err %.3e -> %.3e\n" % (
            r["program"], r["op"], r["m"], r["n"], r["k"], r["seconds"] / t["seconds"],
            r["rel_err"], t["rel_err"]))


if __name__ == "__main__":
    main()
