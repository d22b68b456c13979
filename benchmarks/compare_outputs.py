#!/usr/bin/env python3
"""Compares fbl-run results with saved oracle results.

  compare_outputs.py ORACLE_DIR OUTPUT_DIR [--rtol R] [--atol A] [--atol-of-max]

ORACLE_DIR/resultJ.npy (from e2e_check.py --prepare) against
OUTPUT_DIR/resultJ.npy (from fbl-run --output-dir on a device), elementwise:
|fbl - oracle| <= atol + rtol |oracle|, as e2e_check.py compares (with
--atol-of-max, atol is a fraction of max|oracle| of each result: for sums
that cancel, whose rounding scales with the tensor, not the element; a
device that contracts a * b + c into one rounding, as NVIDIA's OpenCL does,
differs from the oracle there).
"""
import argparse
import os
import sys

import numpy as np


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("oracle")
    ap.add_argument("outputs")
    ap.add_argument("--rtol", type=float, default=1e-3)
    ap.add_argument("--atol", type=float, default=1e-5)
    ap.add_argument("--atol-of-max", action="store_true",
                    help="atol is relative to max|oracle| of each result")
    args = ap.parse_args()
    ok, j = True, 0
    while os.path.exists(os.path.join(args.oracle, f"result{j}.npy")):
        want = np.load(os.path.join(args.oracle, f"result{j}.npy")).ravel()
        path = os.path.join(args.outputs, f"result{j}.npy")
        if not os.path.exists(path):
            print(f"  result{j}: missing")
            ok = False
        else:
            got = np.load(path).astype(np.float64).ravel()
            if got.size != want.size:
                print(f"  result{j}: {want.size} elements, {got.size} returned")
                ok = False
            else:
                scale = max(float(np.abs(want).max()), 1e-30) if want.size else 1.0
                atol = args.atol * scale if args.atol_of_max else args.atol
                err = np.abs(got - want)
                tol = atol + args.rtol * np.abs(want)
                bad = int(np.sum(err > tol))
                worst = float(np.max(err / tol)) if want.size else 0.0
                print(f"  result{j}: {want.size} elements, worst err/tol {worst:.3f}, "
                      f"max err/max|oracle| {float(err.max(initial=0.0)) / scale:.1e}, "
                      f"{bad} out of tolerance")
                ok &= bad == 0
        j += 1
    print("MATCH" if ok and j else "MISMATCH")
    sys.exit(0 if ok and j else 1)


if __name__ == "__main__":
    main()
