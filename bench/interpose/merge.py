#!/usr/bin/env python3
"""Joins the JSON lines of the runs without (NATIVE) and with (TCNLA) the
preload into the CSV gpu, program, op, m, n, k, seconds_native,
seconds_tcnla, rel_err_native, rel_err_tcnla (plus speedup = native /
tcnla), one row per op found in both.
  merge.py --gpu NAME NATIVE.jsonl TCNLA.jsonl > interpose.csv"""
import argparse
import json


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
    print("gpu,program,op,m,n,k,seconds_native,seconds_tcnla,rel_err_native,rel_err_tcnla,speedup")
    for key, r in nat.items():
        if key not in tc:
            continue
        t = tc[key]
        print("%s,%s,%s,%d,%d,%d,%.6e,%.6e,%.4e,%.4e,%.3f" % (
            a.gpu, r["program"], r["op"], r["m"], r["n"], r["k"], r["seconds"], t["seconds"],
            r["rel_err"], t["rel_err"], r["seconds"] / t["seconds"]))


if __name__ == "__main__":
    main()
