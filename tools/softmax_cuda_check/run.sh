#!/usr/bin/env bash
# Builds the softmax kernels and this harness with nvcc (no Python package), then runs the tests
# (with and without thread-block clusters) and the benchmark. Logs go to $OUT when set.
# Usage: bash tools/softmax_cuda_check/run.sh [test|bench|all]   (from the repository root)
set -uo pipefail
cd "$(dirname "$0")/../.."
mode=${1:-all}
out=${OUT:-/tmp/softmax_cuda_check}
mkdir -p "$out" build/softmax_cuda_check
flags="-std=c++17 -O3 -arch=${ARCH:-sm_90} --expt-relaxed-constexpr -I."
bin=build/softmax_cuda_check
start=$(date +%s)
if [[ -z ${PREBUILT:-} ]]; then  # PREBUILT=1: reuse a binary built elsewhere (same arch)
nvcc $flags -c ops/softmax/softmax_cuda.cu -o $bin/softmax_cuda.o &
nvcc $flags -c tools/softmax_cuda_check/main.cu -o $bin/main.o &
wait -n && wait -n || { echo "build failed"; exit 1; }
nvcc $flags $bin/softmax_cuda.o $bin/main.o -o $bin/softmax_cuda_check || exit 1
echo "build: $(( $(date +%s) - start )) s"
fi
rc=0
if [[ $mode == test || $mode == all ]]; then
  $bin/softmax_cuda_check test-big 2>&1 | tee "$out/test.log" | grep -v "^FAIL" ; rc=$((rc | $?))
  grep -c "^FAIL" "$out/test.log" && grep "^FAIL" "$out/test.log" | head -20
  echo "--- without clusters (portable split-row / block paths)"
  MT_SOFTMAX_NO_CLUSTER=1 $bin/softmax_cuda_check test 2>&1 | tee "$out/test_nocluster.log" | grep -v "^FAIL"
  grep "^FAIL" "$out/test_nocluster.log" | head -10
fi
if [[ $mode == bench || $mode == all ]]; then
  $bin/softmax_cuda_check bench 2>&1 | tee "$out/bench.log"
fi
exit $rc
