"""Checks fbl-cachesim's JSON report of a compiled module against the module.

  check_cachesim.py MODULE.mlir REPORT.json [EXACT.json]

Every fbl.dispatch of the module is reported once, in order, under its
function; per kernel 0 <= misses <= fetches, something is written, the
scaled counts are the simulated ones times the scale, and the time is at
least the launch cost. With EXACT (the same module with --exact, every
work-group run) the sample's fetches and writes are within 25% of the exact
ones per step. Prints one summary line per function and policy-independent
totals; exits 1 with the first failed check.
"""

import json
import re
import sys


def fail(message):
    print("check_cachesim: " + message)
    sys.exit(1)


def dispatches(module_text):
    """Kernel names per function, in order."""
    funcs = {}
    current = None
    for line in module_text.splitlines():
        m = re.match(r"\s*func\.func @(\w+)", line)
        if m:
            current = m.group(1)
            continue
        m = re.search(r"fbl\.dispatch @(\w+)", line)
        if m:
            funcs.setdefault(current, []).append(m.group(1))
    return funcs


def main():
    module = open(sys.argv[1]).read()
    report = json.load(open(sys.argv[2]))
    exact = json.load(open(sys.argv[3])) if len(sys.argv) > 3 else None
    expected = dispatches(module)
    reported = {f["name"]: f for f in report["functions"]}
    if sorted(expected) != sorted(reported):
        fail("functions %s, reported %s" % (sorted(expected), sorted(reported)))
    for name, kernels in expected.items():
        f = reported[name]
        names = [k["name"] for k in f["kernels"]]
        if names != kernels:
            fail("@%s: kernels %s, reported %s" % (name, kernels, names))
        for k in f["kernels"]:
            s = k["simulated"]
            where = "@%s/@%s" % (name, k["name"])
            fetches = s["texel_fetches"] + s["buffer_reads"]
            misses = s["texel_misses"] + s["buffer_misses"]
            writes = s["texel_writes"] + s["buffer_writes"]
            if not 0 <= misses <= fetches:
                fail("%s: %d misses of %d fetches" % (where, misses, fetches))
            if writes <= 0:
                fail("%s writes nothing" % where)
            # Each simulated unit stands for at least the groups it ran.
            for key, count in (("fetches", fetches), ("misses", misses),
                               ("writes", writes)):
                if not count <= k[key] <= count * k["groups"]:
                    fail("%s: %s %g from %d simulated over %d of %d groups" %
                         (where, key, k[key], count, k["groups_simulated"],
                          k["groups"]))
            if k["time_ns"] < 1000:
                fail("%s: time %g ns is below any launch cost" %
                     (where, k["time_ns"]))
        if exact:
            e = {g["name"]: g for g in exact["functions"]}[name]
            for k in e["kernels"]:
                s = k["simulated"]
                if (k["groups_simulated"] != k["groups"] or
                        k["fetches"] != s["texel_fetches"] + s["buffer_reads"]):
                    fail("@%s/@%s: the exact run sampled or scaled" %
                         (name, k["name"]))
            for key in ("fetches", "writes"):
                if abs(f[key] - e[key]) > 0.25 * e[key]:
                    fail("@%s: sampled %s %g, exact %g" % (name, key, f[key],
                                                           e[key]))
        print("@%s: %d kernels checked" % (name, len(kernels)))


if __name__ == "__main__":
    main()
