#!/usr/bin/env bash
# Liger and QuACK for the GPU machine, which has no network: fetched and packed here, unpacked
# and used there. QuACK's CuTe DSL libraries (~270 MB unpacked) do not fit one device call's
# 64 MiB when compressed together (~69 MB with xz -9), so they travel as two archives: the
# largest library alone (~50 MB), then the rest (~20 MB) in the next call, while the machine is
# still warm.
#
#   bash scripts/contender_wheels.sh pack                # here: .qsite/part1.tar.xz, part2.tar.xz
#   bash scripts/contender_wheels.sh unpack PART.tar.xz  # there, once per archive: into /root/site
#   bash scripts/contender_wheels.sh bench ARGS...       # there: python -m minitensor.bench ARGS, run from /tmp
#                                                        # with /root/site on the path (its .pth
#                                                        # files honoured, as QuACK needs), e.g.
#                                                        # bench softmax --compare torch,quack
#   bash scripts/contender_wheels.sh sweep [DTYPE...]    # there: the forward sweep, a process a dtype
#                                                        # (default all four), into $OUT/sweep_DTYPE/
# `sweep` races torch, torch.compile, Liger and QuACK (float64: torch and torch.compile, the others
# refuse it or were left out), on SWEEP_CASES (a cases file; default the package's sweep), and
# starts no dtype with under 170 s of SWEEP_SECONDS (default 570: one device call) left (a dtype
# took 130-160 s with torch.compile's cache cold in the sixtieth session's sweep, and a float32 run
# started with 125 s left was killed unfinished), so that a call returns what it finished; the next
# call (the machine still warm) runs the rest.
# Versions as the twenty-eighth session's sweep used them (Python 3.12 wheels).
set -euo pipefail
self=$(realpath "$0")
[ -n "${SWEEP_CASES:-}" ] && SWEEP_CASES=$(realpath "$SWEEP_CASES")
cd "$(dirname "$0")/.."
site_dir=/root/site
big_lib=./nvidia_cutlass_dsl/dsl_packages/cutlass/_mlir/_mlir_libs/_cutlass_ir.cu13.cpython-312-x86_64-linux-gnu.so
wheels=(quack-kernels==0.6.5 liger-kernel==0.8.5 nvidia-cutlass-dsl==4.8.1
        nvidia-cutlass-dsl-libs-base==4.8.1 nvidia-cutlass-dsl-libs-core==4.8.1
        nvidia-cutlass-dsl-libs-cu13==4.8.1 "apache-tvm-ffi>=0.1.6,<0.2" torch-c-dlpack-ext einops)

case "${1:-}" in
  pack)
    for ignored in /.whl/ /.qsite/; do
      grep -qxF "$ignored" .git/info/exclude 2>/dev/null || echo "$ignored" >> .git/info/exclude
    done
    platforms=()
    for p in manylinux_2_17 manylinux2014 manylinux_2_24 manylinux_2_27 manylinux_2_28 manylinux_2_34; do
      platforms+=(--platform "${p}_x86_64")
    done
    python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
      --implementation cp "${platforms[@]}" -d .whl "${wheels[@]}"
    # Wheels are zip files; unpacked as they are (pip would refuse cp312 wheels on another Python).
    rm -rf .qsite && mkdir -p .qsite/site
    for w in .whl/*.whl; do python3 -m zipfile -e "$w" .qsite/site/; done
    (cd .qsite/site && tar cf - "$big_lib" | xz -9 > ../part1.tar.xz &&
       tar cf - --exclude="$big_lib" . | xz -9 > ../part2.tar.xz)
    ls -l .qsite/part1.tar.xz .qsite/part2.tar.xz
    echo "carry .qsite/part1.tar.xz in one call, .qsite/part2.tar.xz in the next (within 30 s)"
    ;;
  unpack)
    mkdir -p "$site_dir" && tar xJf "${2:?an archive from pack}" -C "$site_dir"
    ;;
  bench)
    shift
    cd /tmp  # import the installed package, not the source folder (python -c puts the cwd first)
    exec python3 -c 'import runpy, site, sys
site.addsitedir(sys.argv[1])
sys.argv = ["minitensor.bench"] + sys.argv[2:]
runpy.run_module("minitensor.bench", run_name="__main__")' "$site_dir" "$@"
    ;;
  sweep)
    shift
    start=$(date +%s)
    out=${OUT:-/tmp/out}
    dtypes=("$@")
    [ "${#dtypes[@]}" -eq 0 ] && dtypes=(float32 float16 bfloat16 float64)
    for dtype in "${dtypes[@]}"; do
      left=$(( ${SWEEP_SECONDS:-570} - ($(date +%s) - start) ))
      [ "$left" -lt 170 ] && { echo "$dtype: not started, ${left} s left"; continue; }
      compare=torch,compile,liger,quack
      [ "$dtype" = float64 ] && compare=torch,compile
      mkdir -p "$out"
      rc=0
      timeout "$left" "$self" bench softmax --device cuda --compare "$compare" --dtype "$dtype" \
        ${SWEEP_CASES:+--cases "$SWEEP_CASES"} --out "$out/sweep_$dtype" >"$out/sweep_$dtype.log" 2>&1 ||
        rc=$?
      echo "$dtype: exit $rc, $(( $(date +%s) - start )) s"
    done
    ;;
  *)
    sed -n '2,22p' "$0"
    exit 2
    ;;
esac
