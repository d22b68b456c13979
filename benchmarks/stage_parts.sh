# Sourced by the device scripts that run what stage_every_row.sh staged
# (every_row_device_run.sh, compare_stages_device_run.sh): which parts a
# run asks for, the models a stage holds, building their programs, and the
# machine a log comes from.

# The parts asked for (`speed`, model names): none is all of them.
set_parts() { parts=" $* "; }
wants() { [ "$parts" = "  " ] || [[ "$parts" == *" $1 "* ]]; }

# The models STAGE holds (its f32-MODEL/ folders) that are asked for.
staged_models() { # STAGE
  local d model
  for d in "$1"/f32-*/; do
    [ -d "$d" ] || continue
    model=$(basename "$d")
    model=${model#f32-}
    if wants "$model"; then echo "$model"; fi
  done
}

# Builds the programs of each BUNDLE that exists into the runtime's cache,
# 16 at a time (one step each): builds are the slow part of a first run.
build_programs() { # RUN DEVICE BUNDLE...
  local run=$1 device=$2 b
  shift 2
  for b; do if [ -e "$b" ]; then printf '%s\n' "$b"; fi; done |
    xargs -P 16 -I{} sh -c "'$run' {} --device '$device' --random-inputs 1 --iterations 1 >/dev/null 2>&1 || echo 'build failed: {}'"
}

# The GPU and the host: PyTorch eager issues every kernel from Python, so
# its launch-bound steps are as fast as the host's CPU lets them be (on two
# H100 machines BERT-base's step took 27.5 and 17.3 ms; fbl's 19.1 and
# 19.2). every_row_table.py prints the hosts of the logs it reads.
print_machine() {
  nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader 2>/dev/null
  echo "host: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(nproc) cores"
}
