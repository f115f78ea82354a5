#!/bin/sh
# Builds the standalone test and benchmark with the flags the library uses for softmax_cpu.cpp.
set -e
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-/tmp/cpu_softmax_bench}
mkdir -p "$OUT"
FLAGS="-std=c++17 -O3 -march=native -fno-math-errno -mprefer-vector-width=512 -Wno-psabi -pthread -I$ROOT"
COMMON="$ROOT/ops/softmax/softmax_cpu.cpp $ROOT/core/parallel.cpp"
g++ $FLAGS "$ROOT/tools/cpu_softmax_bench/test_softmax_cpu.cpp" $COMMON -o "$OUT/test_softmax_cpu"
g++ $FLAGS "$ROOT/tools/cpu_softmax_bench/bench_softmax_cpu.cpp" $COMMON -o "$OUT/bench_softmax_cpu"
echo "built $OUT/test_softmax_cpu $OUT/bench_softmax_cpu"
