#!/usr/bin/env bash
# One call on a GPU machine with no network: build, GPU tests, compute-sanitizer, benchmarks.
# Everything printed also goes to $OUT/gpu_check.log; the benchmarks add CSV and PNG files
# (at most 8 files come back from the device tool, so logs share one file). Steps can be picked:
#   bash scripts/gpu_check.sh                          # build smoke tests sanitize bench overhead ladder matmul demo
#   bash scripts/gpu_check.sh build bench              # only these
#   bash scripts/gpu_check.sh build backward           # the softmax backward sweep (not run by default)
# BENCH_ARGS overrides the softmax benchmark's arguments (default: the full sweep against torch,
# torch.compile, Liger and QuACK, each where importable); BACKWARD_ARGS the backward sweep's.
# A wheel in .gpuwheel/ (saved from an earlier run's $OUT) skips the build.
set -uo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
OUT=${OUT:-$repo/gpu_out}
mkdir -p "$OUT"
log="$OUT/gpu_check.log"
steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(build smoke tests sanitize bench overhead ladder matmul demo)
want() { [[ " ${steps[*]} " == *" $1 "* ]]; }
say() { echo "== $*" | tee -a "$log"; }
status=0
py=python3
export PYTHONUNBUFFERED=1

nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.mem --format=csv | tee -a "$log"

if want build; then
  start=$(date +%s)
  if ls .gpuwheel/minitensor-*.whl >/dev/null 2>&1; then
    say "install prebuilt wheel"
    $py -m pip install -q --no-deps --force-reinstall .gpuwheel/minitensor-*.whl >>"$log" 2>&1 || exit 1
  else
    say "build"
    CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) $py -m pip wheel --no-build-isolation --no-deps -w /tmp/wheel . \
      >/tmp/build.log 2>&1 || { tail -60 /tmp/build.log | tee -a "$log"; exit 1; }
    $py -m pip install -q --no-deps --force-reinstall /tmp/wheel/minitensor-*.whl >>"$log" 2>&1 || exit 1
    cp /tmp/wheel/minitensor-*.whl "$OUT/"
  fi
  say "build: $(( $(date +%s) - start )) s"
fi

cd /tmp  # import the installed package, not the source folder
if want smoke; then
  say "smoke: a C++ exception reaches Python as an error, a CUDA softmax runs"
  $py -c "
import minitensor as mt
try:
    mt.zeros(2).reshape(5)
except ValueError as e:
    print('ValueError:', e)
print(mt.Tensor([[1.0, 2.0, 3.0]], device='cuda').softmax(1))
" 2>&1 | tee -a "$log"
  [ "${PIPESTATUS[0]}" -eq 0 ] || { say "smoke FAILED"; exit 1; }
fi

if want tests; then
  say "tests (CPU and CUDA)"
  xdist=$($py -c "import xdist" 2>/dev/null && echo "-n 8")
  # shellcheck disable=SC2086
  $py -m pytest "$repo/tests" -q -p no:cacheprovider $xdist --maxfail=40 2>&1 | tail -60 | tee -a "$log"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
fi

if want sanitize; then
  # The whole GPU suite under memcheck, racecheck and initcheck, less the `large` tests (> 2^31
  # elements: hours under the tools) and the `unsanitized` ones: they fault on purpose, measure
  # the process's own memory, launch kernels from 8 host threads at once, where all three tools
  # hung (racecheck: "Internal Sanitizer Error: Detected a failure to track a kernel launch"), or
  # train for 300 steps (over 6 minutes under racecheck). The tools slow the host side most, so each tool's run is split
  # into SANITIZE_SHARDS pytest processes (--shard K/N) that run side by side on the GPU.
  # API errors are not reported: tests provoke them on purpose (bad devices, huge sizes) and
  # every CUDA call is checked by the library, so an unexpected one fails its test anyway.
  shards=${SANITIZE_SHARDS:-5}
  # A test stuck under a tool fails with every thread's stack instead of hanging the shard.
  per_test_limit=$($py -c "import pytest_timeout" 2>/dev/null && echo "-p timeout --timeout=400 --timeout-method=thread")
  say "compute-sanitizer memcheck, racecheck, initcheck over the GPU suite ($shards shards each)"
  san_start=$(date +%s)
  pids=()
  for tool in memcheck racecheck initcheck; do
    for ((k = 0; k < shards; k++)); do
      timeout "${SANITIZE_TIMEOUT:-1200}" compute-sanitizer --tool "$tool" --report-api-errors no \
        --error-exitcode 9 $py -m pytest "$repo/tests" -q -p no:cacheprovider \
        -m "cuda and not large and not unsanitized" --shard "$k/$shards" $per_test_limit >"/tmp/san_${tool}_$k.log" 2>&1 &
      pids+=("$tool $k $!")
    done
  done
  for entry in "${pids[@]}"; do
    read -r tool k pid <<<"$entry"
    wait "$pid"; rc=$?
    summary=$(grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" "/tmp/san_${tool}_$k.log" | sort | uniq -c | tr -s ' ' | tr '\n' ';')
    result=$(grep -E "[0-9]+ (passed|failed)" "/tmp/san_${tool}_$k.log" | tail -1)
    say "$tool shard $k/$shards: exit $rc; $result; $summary"
    if [ "$rc" -ne 0 ]; then
      status=1
      grep -B2 -A12 "=========.*\(Invalid\|Race\|Uninitialized\|Error\|Hazard\)" "/tmp/san_${tool}_$k.log" |
        head -60 | tee -a "$log"
      grep -E "^(FAILED|ERROR) " "/tmp/san_${tool}_$k.log" | head -20 | tee -a "$log"
    fi
  done
  say "compute-sanitizer: $(( $(date +%s) - san_start )) s"
fi

if want bench; then
  say "softmax benchmark"
  # shellcheck disable=SC2086
  $py -m minitensor.bench softmax --device cuda ${BENCH_ARGS:---compare torch,compile,liger,quack} --out "$OUT" \
    2>/dev/null | tee -a "$log"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
fi

if want backward; then
  say "softmax backward benchmark"
  # shellcheck disable=SC2086
  $py -m minitensor.bench softmax --device cuda --backward ${BACKWARD_ARGS:---compare torch,compile,quack} \
    --out "$OUT" 2>/dev/null | tee -a "$log"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
fi

if want overhead; then
  say "host overhead"
  $py -m minitensor.bench overhead --device cuda 2>&1 | tee -a "$log"
fi

if want ladder; then
  say "kernel ladder"
  $py -m minitensor.bench ladder --out "$OUT" 2>/dev/null | tee -a "$log"
fi

if want matmul; then
  say "matmul GFLOP/s"
  $py -m minitensor.bench.matmul_bench 2>&1 | tee -a "$log"
fi

if want demo; then
  say "demo"
  $py -m minitensor.demo 2>&1 | tail -4 | tee -a "$log"
fi
exit $status
