#!/usr/bin/env bash
# Runs on the device machine (after '. .device/env.sh'): finds which earlier
# launch a faulting launch of a step depends on. A step whose launch F
# faults the device (fbl-run's "launch F of N ... failed" with
# FBL_LAUNCH_BLOCKING=1) while its launches TAIL..N-1 alone run is
# bisected over prefixes: the smallest P such that launches 0..P-1 followed
# by TAIL..N-1 (benchmarks/kernels_alone.py) fault, so that launch P-1 is
# the one whose effect the fault needs. The program is built once, into the
# runtime's binary cache; each try loads it from there.
#   bash benchmarks/bisect_fault_device_run.sh BUNDLE.tar.xz TAIL
# Prints each try and the answer; writes $OUT/bisect-fault.log.
set -uo pipefail
tarball=$1 tail=$2
out=${OUT:-/tmp}
stage=$(dirname "$(dirname "$tarball")")
run=${FBL_RUN:-$stage/bin/fbl-run}
export LD_LIBRARY_PATH=$stage/lib:${LD_LIBRARY_PATH:-}
work=/tmp/bisect-fault
rm -rf "$work"; mkdir -p "$work"
tar -C "$work" -xJf "$tarball"
export FBL_LAUNCH_BLOCKING=1

# Whether launches 0..$1-1 and TAIL.. fault; prints fbl-run's last line.
faults() { # PREFIX
  local dir=$work/try-$1
  python3 - "$work/bundle" "$dir" "$1" "$tail" <<'PY'
import json, subprocess, sys
bundle, out, prefix, tail = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
kernels = json.load(open(bundle + "/manifest.json"))["kernels"]
names = [k["name"] for i, k in enumerate(kernels) if i < prefix or i >= tail]
subprocess.run([sys.executable, "benchmarks/kernels_alone.py", bundle, out] + names,
               check=True)
PY
  local start=$SECONDS
  timeout 300 "$run" "$dir" --device gpu --random-inputs 1 --iterations 1 \
    > "$dir/run.log" 2>&1
  local rc=$?
  echo "prefix $1: rc $rc in $((SECONDS - start)) s: $(grep -m1 -E 'error|median' "$dir/run.log")"
  rm -rf "$dir"
  [ $rc -ne 0 ]
}

{
  n=$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['kernels']))" \
      "$work/bundle/manifest.json")
  echo "== $tarball: $n launches, tail from $tail"
  if ! faults "$tail"; then
    echo "the whole step does not fault: nothing to bisect"
  elif faults 0; then
    echo "launches $tail.. fault alone: nothing before them is needed"
  else
    lo=0 hi=$tail
    while [ $((hi - lo)) -gt 1 ]; do
      mid=$(((lo + hi) / 2))
      if faults "$mid"; then hi=$mid; else lo=$mid; fi
    done
    # Whether that launch writes what the tail reads (a value the fault
    # needs) or only adds to the images the step has touched (a resource).
    python3 - "$work/bundle/manifest.json" "$((hi - 1))" "$tail" <<'PY'
import json, sys
kernels = json.load(open(sys.argv[1]))["kernels"]
p, tail = int(sys.argv[2]), int(sys.argv[3])
writes = {a["memory"] for a in kernels[p]["args"] if a["access"] != "read"}
reads = {a["memory"] for k in kernels[tail:] for a in k["args"] if a["access"] == "read"}
touched = {a["memory"] for k in kernels[:p + 1] + kernels[tail:] for a in k["args"]}
print(f"== the fault needs launch {p}: {kernels[p]['name']}; it writes "
      f"{len(writes & reads)} of the images launches {tail}.. read; "
      f"launches 0..{p} and {tail}.. touch {len(touched)} images")
PY
  fi
} 2>&1 | tee "$out/bisect-fault.log"
