"""How a device's results are held to the oracle: one home for the rule
that e2e_check.py (tests) and benchmarks/compare_outputs.py (results brought
back from another machine) apply.

1. Against the f32 oracle, elementwise: |fbl - oracle| <= atol + rtol
   |oracle| (atol a fraction of max|oracle| with `atol_of_max`).
2. Where that fails and an f64 evaluation of the same function exists: the
   f32 oracle is itself an f32 evaluation, in one summation order. A result
   whose terms cancel (a softmax's backward, P (dP - rowsum(P dP)), feeding
   a weight's gradient) can differ between two correct f32 evaluations by
   more than rtol 1e-3 at elements near zero. The result then passes when
   fbl errs against f64 by at most F32_ROUNDING_FACTOR times what the f32
   oracle errs against f64 (each the largest error over the largest
   magnitude), and never by more than rtol of the largest magnitude. A
   term dropped or read from a wrong index errs by far more (docs/Testing.md
   gives the measurements).
"""
import numpy as np

# Two f32 evaluations in different summation orders: measured (attention
# 128x256, AdamW step, row kernels on PoCL) fbl's worst error against f64 at
# 0.5x to 1.7x the oracle's; the factor leaves room for the spread between
# seeds while a wrong term stays orders of magnitude beyond it.
F32_ROUNDING_FACTOR = 4.0


def elementwise(got, want, rtol, atol, atol_of_max):
    """(elements, worst err/tol, max err/max|oracle|, elements out of
    tolerance, whether the sizes match) of `got` against `want`."""
    got = np.asarray(got, dtype=np.float64).ravel()
    want = np.asarray(want, dtype=np.float64).ravel()
    if got.size != want.size:
        return want.size, float("inf"), float("inf"), want.size, False
    if not want.size:
        return 0, 0.0, 0.0, 0, True
    scale = largest_magnitude(want)
    err = difference(got, want)
    tol = (atol * scale if atol_of_max else atol) + rtol * np.abs(want)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(err == 0, 0.0, err / tol)
    return (want.size, float(np.max(ratio)), float(np.max(err)) / scale,
            int(np.sum(err > tol)), True)


def largest_magnitude(values):
    """max |values| over the finite ones (at least 1e-30)."""
    finite = values[np.isfinite(values)]
    return max(float(np.max(np.abs(finite))) if finite.size else 0.0, 1e-30)


def difference(got, want):
    """|got - want| elementwise, where a NaN or infinity that the other does
    not match is an infinite difference (so that it is never within a
    tolerance: NaN > tol is false) and equal values, infinities and NaNs
    included, differ by 0."""
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    with np.errstate(invalid="ignore"):
        err = np.abs(got - want)
    return np.where(same, 0.0, np.where(np.isnan(err), np.inf, err))


def relative_error(got, reference):
    """Largest |got - reference| over the largest |reference|."""
    got = np.asarray(got, dtype=np.float64).ravel()
    reference = np.asarray(reference, dtype=np.float64).ravel()
    if not reference.size:
        return 0.0
    return (float(np.max(difference(got, reference)))
            / largest_magnitude(reference))


def within_f32_rounding(got, want32, want64, rtol):
    """Step 2 of the rule: (passes, fbl's error against f64, the f32
    oracle's error against f64), both relative to max|f64|."""
    mine = relative_error(got, want64)
    oracle = relative_error(want32, want64)
    return mine <= min(F32_ROUNDING_FACTOR * oracle, rtol), mine, oracle


def describe(j, row, second=None):
    """One result's line; `second` is within_f32_rounding's answer when the
    first comparison failed and an f64 evaluation was there."""
    size, worst, rel, bad, same = row
    if not same:
        return f"  result{j}: {size} elements, sizes differ"
    line = (f"  result{j}: {size} elements, worst err/tol {worst:.3f}, "
            f"max err/max|oracle| {rel:.1e}, {bad} out of tolerance")
    if bad and second is not None:
        ok, mine, oracle = second
        line += (f"; against f64 {mine:.1e}, the f32 oracle's {oracle:.1e}: "
                 + ("within f32 rounding" if ok else "beyond f32 rounding"))
    return line


def verdict(j, got, want32, want64, rtol, atol, atol_of_max):
    """(passes, line, elementwise's row) for result `j` under the whole
    rule; `want64` may be None (no f64 evaluation)."""
    row = elementwise(got, want32, rtol, atol, atol_of_max)
    if not row[4]:
        return False, describe(j, row), row
    if row[3] == 0:
        return True, describe(j, row), row
    if want64 is None or np.asarray(want64).size != np.asarray(want32).size:
        return False, describe(j, row), row
    second = within_f32_rounding(got, want32, want64, rtol)
    return second[0], describe(j, row, second), row
