#!/usr/bin/env python3
"""Writes prepared folders for compare_outputs.py's rule
(oracle_verdict.py), in the form e2e_check.py --prepare leaves them:

  oracle_verdict_cases.py DIR

DIR/oracle, DIR/oracle64 (an f64 evaluation), and results of a device:
  rounding/   errs against f64 as an f32 evaluation in another order does
              (terms that cancel: elements near zero miss rtol 1e-3);
  wrong/      the same, one element read from the wrong index;
  far/        the same rounding, 5x larger than the oracle's own;
  resized/    one result of another size;
  nan/        the loss NaN (a NaN is never within a tolerance: before,
              NaN > tol being false let a NaN result pass).
"""
import os
import sys

import numpy as np


def main():
    out = sys.argv[1]
    rng = np.random.default_rng(5)
    # Gradients behind a cancelling sum: values up to ~10, every 7th near
    # zero; an f32 evaluation errs by rounding errors of the sum's terms,
    # ~2e-5 of the largest magnitude (the attention step's weight gradients
    # measured 1.8e-5 to 2.9e-5), the oracle and the device independently.
    exact = rng.uniform(-10, 10, size=512)
    exact[::7] = rng.uniform(-1e-4, 1e-4, size=exact[::7].size)
    rounding = lambda: 10 * 2e-5 * rng.uniform(-1, 1, size=512)
    oracle32 = (exact + rounding()).astype(np.float32).astype(np.float64)
    device = (exact + rounding()).astype(np.float32).astype(np.float64)
    loss = np.array([float(np.float32(exact.sum()))])

    def save(folder, results):
        os.makedirs(os.path.join(out, folder), exist_ok=True)
        for j, r in enumerate(results):
            np.save(os.path.join(out, folder, f"result{j}.npy"), r)

    save("oracle", [loss, oracle32])
    save("oracle64", [np.array([exact.sum()]), exact])
    save("rounding", [loss, device])
    wrong = device.copy()
    wrong[100] = device[101]
    save("wrong", [loss, wrong])
    save("far", [loss, exact + 5 * (oracle32 - exact)])
    save("resized", [loss, device[:-1]])
    save("nan", [np.array([np.nan]), device])


if __name__ == "__main__":
    main()
