#!/usr/bin/env python3
"""Compares fbl-run results with saved oracle results.

  compare_outputs.py ORACLE_DIR OUTPUT_DIR [--rtol R] [--atol A] [--atol-of-max]

ORACLE_DIR/resultJ.npy (from e2e_check.py --prepare) against
OUTPUT_DIR/resultJ.npy (from fbl-run --output-dir on a device), by the rule
e2e_check.py applies (test/lib/oracle_verdict.py): elementwise |fbl -
oracle| <= atol + rtol |oracle| (with --atol-of-max, atol is a fraction of
max|oracle| of each result: for sums that cancel, whose rounding scales with
the tensor, not the element; a device that contracts a * b + c into one
rounding, as NVIDIA's OpenCL does, differs from the oracle there). Where
that fails and the prepared folder has the f64 evaluation (ORACLE_DIR's
sibling `oracle64/`), a result within the f32 oracle's own rounding error
against f64 passes.
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "test", "lib"))
import oracle_verdict  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("oracle")
    ap.add_argument("outputs")
    ap.add_argument("--rtol", type=float, default=1e-3)
    ap.add_argument("--atol", type=float, default=1e-5)
    ap.add_argument("--atol-of-max", action="store_true",
                    help="atol is relative to max|oracle| of each result")
    args = ap.parse_args()
    wide = os.path.join(os.path.dirname(os.path.abspath(args.oracle)), "oracle64")
    ok, j = True, 0
    while os.path.exists(os.path.join(args.oracle, f"result{j}.npy")):
        want = np.load(os.path.join(args.oracle, f"result{j}.npy")).ravel()
        path = os.path.join(args.outputs, f"result{j}.npy")
        want64 = os.path.join(wide, f"result{j}.npy")
        if not os.path.exists(path):
            print(f"  result{j}: missing")
            ok = False
        else:
            passed, line, _ = oracle_verdict.verdict(
                j, np.load(path), want,
                np.load(want64) if os.path.exists(want64) else None,
                args.rtol, args.atol, args.atol_of_max)
            print(line)
            ok &= passed
        j += 1
    print("MATCH" if ok and j else "MISMATCH")
    sys.exit(0 if ok and j else 1)


if __name__ == "__main__":
    main()
