"""Measures fbl-cachesim's sample against the exact run, and its speed.

  cachesim_sampling.py [--bin build/bin] [--target T]... STEP.mlir...

For each compiled module (after the training pipeline) and target (default:
the module's own), runs fbl-cachesim with its default sample and with
--exact (every work-group of every compute unit) and prints, per function,
the CPU seconds of both simulations and the sample's error on the step's
fetches, misses and time, and the median and largest error on the misses
of single kernels (those with at least 1000 exact misses).
"""

import argparse
import json
import os
import statistics
import subprocess


def run(binary, module, target, exact):
    cmd = [binary, module, "--json"]
    if target:
        cmd.append("--target=" + target)
    if exact:
        cmd.append("--exact")
    return json.loads(subprocess.run(cmd, check=True, capture_output=True,
                                     text=True).stdout)


def error(sampled, exact):
    return 100.0 * (sampled - exact) / exact if exact else 0.0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default="build/bin")
    parser.add_argument("--target", action="append", default=[])
    parser.add_argument("modules", nargs="+")
    args = parser.parse_args()
    binary = os.path.join(args.bin, "fbl-cachesim")
    print("| module | target | function | kernels | sample CPU s | exact CPU s | "
          "fetches | misses | time | kernel misses (median, max) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for module in args.modules:
        for target in args.target or [None]:
            sampled = run(binary, module, target, False)
            exact = run(binary, module, target, True)
            for fs, fe in zip(sampled["functions"], exact["functions"]):
                kernel_errors = [
                    abs(error(ks["misses"], ke["misses"]))
                    for ks, ke in zip(fs["kernels"], fe["kernels"])
                    if ke["misses"] >= 1000
                ]
                spread = ("%.1f%%, %.1f%%" %
                          (statistics.median(kernel_errors),
                           max(kernel_errors)) if kernel_errors else "-")
                print("| %s | %s | @%s | %d | %.2f | %.2f | %+.1f%% | "
                      "%+.1f%% | %+.1f%% | %s |" %
                      (os.path.basename(module), sampled["target"]["name"],
                       fs["name"], len(fs["kernels"]), fs["cpu_seconds"],
                       fe["cpu_seconds"], error(fs["fetches"], fe["fetches"]),
                       error(fs["misses"], fe["misses"]),
                       error(fs["time_ns"], fe["time_ns"]), spread))


if __name__ == "__main__":
    main()
