#!/usr/bin/env python3
"""Compares fbl-training-pipeline reports of the three layout policies.

  compare_policies.py FBLAYOUT.json REUSE_FORWARD.json EXPLICIT_TRANSPOSE.json

Prints a table (relayouts, relayout bytes, views folded, estimated cost) and
checks what fbl's layouts must achieve against both baselines: a lower
estimated cost, no more relayout bytes than explicit-transpose, and the
index transforms folded into views. Exits non-zero otherwise.
"""
import json
import sys

KEYS = ["policy", "ops_by_class", "relayouts", "relayout_bytes",
        "views_folded", "tensors_by_layout", "estimated_cost"]


def main():
    reports = [json.load(open(p)) for p in sys.argv[1:4]]
    for r in reports:
        missing = [k for k in KEYS if k not in r]
        if missing:
            sys.exit(f"report of {r.get('policy')} lacks {missing}")
    print(f"{'policy':<20} {'relayouts':>9} {'relayout bytes':>15} {'views':>6} {'est. cost':>14}")
    for r in reports:
        print(f"{r['policy']:<20} {r['relayouts']:>9} {r['relayout_bytes']:>15} "
              f"{r['views_folded']:>6} {r['estimated_cost']:>14.0f}")
    fbl, reuse, explicit = reports
    ok = True
    for base in (reuse, explicit):
        if not fbl["estimated_cost"] < base["estimated_cost"]:
            print(f"FAIL: fblayout cost is not below {base['policy']}")
            ok = False
    if fbl["relayout_bytes"] > explicit["relayout_bytes"]:
        print("FAIL: fblayout moves more relayout bytes than explicit-transpose")
        ok = False
    ratio_r = reuse["estimated_cost"] / fbl["estimated_cost"]
    ratio_e = explicit["estimated_cost"] / fbl["estimated_cost"]
    print(f"cost ratio reuse-forward/fblayout {ratio_r:.3f}, "
          f"explicit-transpose/fblayout {ratio_e:.3f}")
    print("POLICIES OK" if ok else "POLICIES FAIL")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
