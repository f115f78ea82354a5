#!/usr/bin/env bash
# AddressSanitizer + UndefinedBehaviorSanitizer over the CPU test suite.
#
# Builds minitensor with MINITENSOR_SANITIZE=ON and without CUDA into a throwaway venv (it sees the
# system packages: numpy, pytest, hypothesis, the build backends) so the dev install is untouched,
# then runs every non-cuda test with the sanitizer runtimes preloaded (python itself is not
# instrumented, so the runtimes must be loaded before the extension). Exits non-zero on a test
# failure or on any sanitizer report.
#   bash scripts/sanitize_cpu.sh                 # build + whole CPU suite
#   bash scripts/sanitize_cpu.sh tests/test_softmax.py -k empty    # pytest arguments after the build
# SANITIZE_SKIP_BUILD=1 reuses the last build.
set -uo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
venv=${SANITIZE_VENV:-/tmp/asan_venv}
build_dir=${SANITIZE_BUILD_DIR:-/tmp/asan_build}
log=${SANITIZE_LOG:-/tmp/sanitize_cpu.log}

if [ "${SANITIZE_SKIP_BUILD:-0}" != 1 ]; then
  [ -x "$venv/bin/python" ] || python3 -m venv --system-site-packages --without-pip "$venv" || exit 1
  echo "== build (sanitized, CPU only) into $venv; log: $build_dir.log"
  # Its own build dir: the default build/{wheel_tag} belongs to the dev install.
  MINITENSOR_CUDA=OFF "$venv/bin/python" -m pip install --no-build-isolation --no-deps -q \
    --prefix "$venv" --force-reinstall \
    -C build-dir="$build_dir" \
    -C cmake.define.MINITENSOR_SANITIZE=ON -C cmake.define.MINITENSOR_CUDA=OFF \
    -C cmake.build-type=RelWithDebInfo \
    "$repo" >"$build_dir.log" 2>&1 || { tail -40 "$build_dir.log"; exit 1; }
fi

asan=$(gcc -print-file-name=libasan.so)
ubsan=$(gcc -print-file-name=libubsan.so)
[ -f "$asan" ] && [ -f "$ubsan" ] || { echo "libasan/libubsan not found"; exit 1; }
so=$(cd /tmp && LD_PRELOAD="$asan $ubsan" ASAN_OPTIONS=detect_leaks=0 "$venv/bin/python" -c \
  "import minitensor, sys; sys.stdout.write(minitensor._C.__file__)") || exit 1
case "$so" in "$venv"/*) ;; *) echo "the venv imports $so, not its own sanitized build"; exit 1 ;; esac
# grep without -q reads to the end: with -q it may exit first, and pipefail then fails the check
# on nm's or ldd's SIGPIPE.
nm -D "$so" | grep __asan_ >/dev/null || ldd "$so" | grep libasan >/dev/null ||
  { echo "$so is not built with ASan"; exit 1; }


args=("$@")
[ ${#args[@]} -eq 0 ] && args=("$repo/tests" -m "not cuda")

echo "== pytest under ASan + UBSan; log: $log"
cd /tmp  # import the installed package, not the source folder
# allocator_may_return_null=1: a request ASan cannot serve (over 1 TiB: mt.empty(2**40), a huge
# one_hot) returns NULL as glibc's does, so the library's out-of-memory path (MemoryError), which
# the size and crash-fuzz tests exercise, runs instead of ASan aborting. Memory errors still abort.
LD_PRELOAD="$asan $ubsan" \
ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1:allocator_may_return_null=1 \
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  "$venv/bin/python" -m pytest -q -p no:cacheprovider --capture=sys "${args[@]}" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}

# --capture=sys: pytest must not swallow fd 2, where a report is written just before the abort.
# halt_on_error/abort_on_error stop the run at the first report; a report from a subprocess, or
# one printed without stopping, still has to fail the script.
if grep -qE "ERROR: AddressSanitizer|runtime error:|SUMMARY: (AddressSanitizer|UndefinedBehaviorSanitizer)" "$log"; then
  echo "== sanitizer report(s) found in $log"
  status=1
fi
[ "$status" -eq 0 ] && echo "== sanitize_cpu: clean" || echo "== sanitize_cpu: FAILED ($status)"
exit "$status"
