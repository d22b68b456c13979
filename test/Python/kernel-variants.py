# RUN: %python %s %fbl_src_root/test/Runtime/Inputs/variants-bundle | FileCheck %s
#
# Session.kernel_variants(): which launches run a variant of their function
# after the first run measured them (the bundle's one launch has a slow
# function and a fast variant that writes the same results), and none with
# FBL_KERNEL_VARIANTS=0.

import os
import sys

import numpy as np

import fbl

bundle = sys.argv[1]
with fbl.Session(bundle) as s:
    chosen = s.run()
    # CHECK: chosen: {'k0': 'k0_fill'}
    print("chosen:", s.kernel_variants())
os.environ["FBL_KERNEL_VARIANTS"] = "0"
with fbl.Session(bundle) as s:
    kept = s.run()
    # CHECK: kept: {}
    print("kept:", s.kernel_variants())
for a, b in zip(chosen, kept):
    np.testing.assert_array_equal(a, b)
# CHECK: same results: [0. 1. 2. 3.]
print("same results:", chosen[0])
