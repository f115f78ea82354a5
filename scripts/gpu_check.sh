#!/usr/bin/env bash
# One call on a GPU machine with no network: build, GPU tests, compute-sanitizer, benchmark.
# Logs, CSV and PNG land in $OUT (default ./gpu_out). Steps can be picked:
#   bash scripts/gpu_check.sh                 # build tests sanitize bench demo
#   bash scripts/gpu_check.sh build bench     # only these
# BENCH_ARGS overrides the benchmark's arguments (default: the full sweep against torch and
# torch.compile). A wheel in .gpuwheel/ (from an earlier run's $OUT) skips the build.
set -uo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
OUT=${OUT:-$repo/gpu_out}
mkdir -p "$OUT"
steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(build tests sanitize bench demo)
want() { [[ " ${steps[*]} " == *" $1 "* ]]; }
status=0
py=python3
export PYTHONUNBUFFERED=1

nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.mem --format=csv | tee "$OUT/device.txt"

if want build; then
  if ls .gpuwheel/minitensor-*.whl >/dev/null 2>&1; then
    $py -m pip install -q --no-deps --force-reinstall .gpuwheel/minitensor-*.whl 2>&1 | tee "$OUT/build.log"
  else
    start=$(date +%s)
    CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) $py -m pip wheel --no-build-isolation --no-deps -w /tmp/wheel . \
      >"$OUT/build.log" 2>&1 || { tail -50 "$OUT/build.log"; exit 1; }
    $py -m pip install -q --no-deps --force-reinstall /tmp/wheel/minitensor-*.whl >>"$OUT/build.log" 2>&1
    cp /tmp/wheel/minitensor-*.whl "$OUT/"
    echo "build: $(( $(date +%s) - start )) s"
  fi
fi

cd /tmp  # import the installed package, not the source folder
if want tests; then
  $py -m pytest "$repo/tests" -q -p no:cacheprovider -x --timeout=900 2>&1 | tee "$OUT/tests.log" | tail -30
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
fi

if want sanitize; then
  # A small GPU subset (every tier, a few shapes) under memcheck and racecheck.
  : >"$OUT/sanitizer.log"
  for tool in memcheck racecheck; do
    compute-sanitizer --tool "$tool" --error-exitcode 9 --target-processes all \
      $py -m pytest "$repo/tests" -q -p no:cacheprovider -m cuda -k "sanitizer_subset" 2>&1 |
      tail -15 | tee -a "$OUT/sanitizer.log"
    [ "${PIPESTATUS[0]}" -eq 0 ] || { echo "compute-sanitizer $tool FAILED"; status=1; }
  done
fi

if want bench; then
  # shellcheck disable=SC2086
  $py -m minitensor.bench softmax --device cuda ${BENCH_ARGS:---compare torch,compile} --out "$OUT" \
    2>"$OUT/bench_progress.log" | tee "$OUT/bench.log"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
fi

if want demo; then
  $py -m minitensor.demo 2>&1 | tee "$OUT/demo.log" | tail -5
fi
exit $status
