#!/usr/bin/env python3
"""Stages and runs the calibration kernels of gen_kernel_kinds.py.

  calibrate_kinds.py stage --target T --out DIR [--cpu] [--fbl-bin build/bin]
      writes DIR/NAME/bundle (the OpenCL bundle) and DIR/NAME/estimates.json
      (the cost model's counts of each kernel, kernel_estimates.py) for
      every kernel kind, layout and size;
  calibrate_kinds.py run DIR [--fbl-run PATH] [--device D] [--iterations N]
      runs each bundle with fbl-run --profile on the device and writes
      DIR/NAME/profile.txt (each kernel's median time), then DIR/device.txt.

calibrate.py --dir DIR fits the target's execution model to the result.
"""
import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def stage(args):
    kinds = os.path.join(args.out, "mlir")
    cmd = [sys.executable, os.path.join(HERE, "gen_kernel_kinds.py"), args.target, kinds]
    subprocess.run(cmd + (["--cpu"] if args.cpu else []), check=True)
    names = open(os.path.join(kinds, "cases.txt")).read().split()
    for name in names:
        d = os.path.join(args.out, name)
        os.makedirs(d, exist_ok=True)
        lowered = os.path.join(d, "kernels.mlir")
        subprocess.run([os.path.join(args.fbl_bin, "fbl-opt"), "--fbl-lower-to-kernels",
                        os.path.join(kinds, name + ".mlir"), "-o", lowered], check=True)
        subprocess.run([os.path.join(args.fbl_bin, "fbl-translate"), "--fbl-to-opencl",
                        lowered, "-o", os.path.join(d, "bundle")], check=True)
        subprocess.run([sys.executable, os.path.join(HERE, "kernel_estimates.py"), lowered,
                        os.path.join(d, "estimates.json")], check=True)
    with open(os.path.join(args.out, "cases.txt"), "w") as f:
        f.write("\n".join(names) + "\n")
    print(f"staged {len(names)} calibration kernels for {args.target} in {args.out}")


def run(args):
    names = open(os.path.join(args.dir, "cases.txt")).read().split()
    device = None
    for i, name in enumerate(names):
        d = os.path.join(args.dir, name)
        out = subprocess.run([args.fbl_run, os.path.join(d, "bundle"), "--device", args.device,
                              "--random-inputs", "1", "--iterations", str(args.iterations),
                              "--profile"], capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit(f"{name}: fbl-run failed: {out.stderr.strip()}")
        with open(os.path.join(d, "profile.txt"), "w") as f:
            f.write(out.stdout)
        for line in out.stdout.splitlines():
            if line.startswith("device:"):
                device = line.split(":", 1)[1].strip()
        step = [l for l in out.stdout.splitlines() if "median step time" in l]
        print(f"[{i + 1}/{len(names)}] {name}: {step[0] if step else '?'}", flush=True)
    with open(os.path.join(args.dir, "device.txt"), "w") as f:
        f.write((device or "unknown") + "\n")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("stage")
    s.add_argument("--target", required=True)
    s.add_argument("--out", required=True)
    s.add_argument("--cpu", action="store_true")
    s.add_argument("--fbl-bin", default="build/bin")
    r = sub.add_parser("run")
    r.add_argument("dir")
    r.add_argument("--fbl-run", default="build/bin/fbl-run")
    r.add_argument("--device", default="gpu")
    r.add_argument("--iterations", type=int, default=20)
    args = p.parse_args()
    (stage if args.command == "stage" else run)(args)


if __name__ == "__main__":
    main()
