#!/usr/bin/env bash
# A/B of two builds of minitensor in one call on a GPU machine: the working tree ("new") against
# a base tree ("base", e.g. main), so that a kernel change is timed beside the code it replaces
# without a second call (device time is scarce; a machine going cold between calls costs a start).
#
#   bash scripts/gpu_ab.sh prepare [REF]        # here: REF (default HEAD) into .ab_base/ (ignored)
#   bash scripts/gpu_ab.sh run [tune args...]   # there, with .ab_base carried: e.g.
#   bash scripts/gpu_ab.sh run --kernel --no-torch --dtypes f16,f32 1024x8192 16384x4096
#   AB_BENCH=scripts/ab_small_rows.json bash scripts/gpu_ab.sh run   # small rows: the benchmark
#
# `run` builds both trees at once (half the cores each), installs the new build as the package and
# the base build under /tmp/mt_base, runs the softmax GPU tests on the new build (AB_TESTS=0 skips
# them), then tools/softmax_tune.py with the given arguments once per build (--tag base, --tag
# new). AB_SETTINGS="MT_SOFTMAX_X=1 MT_SOFTMAX_Y=2,MT_SOFTMAX_Z=0" adds a run of the new build per
# setting (settings apart by spaces, a setting's variables by commas): the tuning overrides are
# read once per process. AB_ALT_FLAGS="-DNAME ..." builds the working tree once more with those
# CUDA flags (an experiment behind a macro) and runs it too (--tag alt); several experiments apart
# by `|` ("-DA|-DA -DB") build one tree each (--tag alt1, alt2, ...); AB_ALT_TESTS=0 runs the tests
# on the new build only. AB_BASE_WHEEL=WHEEL (a minitensor wheel, or a folder holding one, carried
# in the call) installs that as the base instead of building .ab_base/, so the working tree builds
# alone on every core; each run leaves the new build's wheel in $OUT/ab_new_wheel/ (when $OUT is
# set), ready to be the next call's base. AB_BENCH=CASES.json (shaped like softmax_shapes.json;
# e.g. scripts/ab_small_rows.json) times each build and setting with the benchmark itself on those
# cases instead of softmax_tune (the tune arguments are then unused), beside AB_BENCH_COMPARE
# (default torch,compile,liger), in AB_BENCH_DTYPES (default float16,bfloat16,float32): some rows of
# a few MiB read 20-25% slower in softmax_tune's isolated runs than in the sweep, whose regime the
# benchmark with torch.compile and Liger beside us reproduces (docs/DESIGN.md). Liger comes from a
# carried .whl/liger_kernel-*.whl (contender_wheels.sh pack). AB_NEW_WHEEL=WHEEL installs that as
# the new build instead of building the working tree: with AB_BASE_WHEEL too, nothing builds on
# the GPU machine (wheels built here and carried). AB_ROUNDS=N times every build and setting N
# times, alternating (tags TAG.rK), so that the machine's drift spreads over all of them;
# AB_DEADLINE=S starts no run S seconds or more after `run` began, so that a call returns what it
# finished. The run ends with a summary: each case's µs (ours) a build or setting, round by round,
# also appended to $OUT/ab_summary.txt (a device call returns only the tail of what it prints).
set -uo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
base=$repo/.ab_base
case "${1:-}" in
  prepare)
    rm -rf "$base" && mkdir -p "$base"
    git archive "${2:-HEAD}" | tar xf - -C "$base" || exit 1
    echo "base tree ($(git rev-parse --short "${2:-HEAD}")) in .ab_base/: carry it in the device call"
    ;;
  run)
    shift
    # A carried wheel: the file itself, or the first minitensor wheel in a folder.
    find_wheel() {
      if [ -d "$1" ]; then ls "$1"/minitensor-*.whl 2>/dev/null | head -1; else echo "$1"; fi
    }
    base_wheel=${AB_BASE_WHEEL:+$(find_wheel "$AB_BASE_WHEEL")}
    new_wheel=${AB_NEW_WHEEL:+$(find_wheel "$AB_NEW_WHEEL")}
    [ -z "${AB_NEW_WHEEL:-}" ] || [ -f "$new_wheel" ] ||
      { echo "AB_NEW_WHEEL: no minitensor wheel at ${AB_NEW_WHEEL}" >&2; exit 2; }
    if [ -n "${AB_BASE_WHEEL:-}" ]; then
      [ -f "$base_wheel" ] || { echo "AB_BASE_WHEEL: no minitensor wheel at ${AB_BASE_WHEEL}" >&2; exit 2; }
    else
      [ -f "$base/CMakeLists.txt" ] || { echo "no base tree: run 'bash scripts/gpu_ab.sh prepare' first" >&2; exit 2; }
    fi
    export PYTHONUNBUFFERED=1
    start=$(date +%s)
    # Cores a build: all of them for the working tree alone, else shared by the trees built at once.
    alt_flags=()
    [ -n "${AB_ALT_FLAGS:-}" ] && IFS='|' read -r -a alt_flags <<<"$AB_ALT_FLAGS"
    builds=${#alt_flags[@]}
    [ -z "$new_wheel" ] && builds=$((builds + 1))
    [ -z "$base_wheel" ] && builds=$((builds + 1))
    [ "$builds" -gt 0 ] || builds=1
    cores=$(( $(nproc) / builds > 0 ? $(nproc) / builds : 1 ))
    build() {  # source folder, wheel folder, log
      (cd "$1" && CMAKE_BUILD_PARALLEL_LEVEL=$cores python3 -m pip wheel --no-build-isolation --no-deps \
        -w "$2" . >"$3" 2>&1) || { tail -40 "$3"; return 1; }
    }
    rm -rf /tmp/ab_wheel_new /tmp/ab_wheel_base
    new_pid=
    if [ -z "$new_wheel" ]; then
      build "$repo" /tmp/ab_wheel_new /tmp/ab_build_new.log & new_pid=$!
    else
      mkdir -p /tmp/ab_wheel_new && cp "$new_wheel" /tmp/ab_wheel_new/
    fi
    base_pid=
    if [ -z "$base_wheel" ]; then
      # The base builds in a copy of its own: scikit-build-core keeps its build folder in the source.
      rm -rf /tmp/ab_base_src && cp -r "$base" /tmp/ab_base_src
      build /tmp/ab_base_src /tmp/ab_wheel_base /tmp/ab_build_base.log & base_pid=$!
    fi
    # Experiments: tags and flags, one tree each (scikit-build-core builds in the source folder).
    alts=() alt_pids=()
    if [ "${#alt_flags[@]}" -gt 0 ]; then
      for i in "${!alt_flags[@]}"; do
        tag=alt; [ "${#alt_flags[@]}" -gt 1 ] && tag=alt$((i + 1))
        alts+=("$tag")
        rm -rf "/tmp/ab_${tag}_src" && mkdir "/tmp/ab_${tag}_src"
        tar cf - --exclude=./.ab_base --exclude=./.git --exclude=./build . | tar xf - -C "/tmp/ab_${tag}_src"
        CUDAFLAGS="${alt_flags[$i]}" build "/tmp/ab_${tag}_src" "/tmp/ab_wheel_$tag" "/tmp/ab_build_$tag.log" &
        alt_pids+=($!)
      done
    fi
    [ -z "$new_pid" ] || wait "$new_pid" || exit 1
    if [ -n "$base_pid" ]; then
      wait "$base_pid" || exit 1
    else
      mkdir -p /tmp/ab_wheel_base && cp "$base_wheel" /tmp/ab_wheel_base/
    fi
    if [ -n "${OUT:-}" ]; then
      mkdir -p "$OUT/ab_new_wheel" && cp /tmp/ab_wheel_new/minitensor-*.whl "$OUT/ab_new_wheel/"
    fi
    for i in "${!alts[@]}"; do
      wait "${alt_pids[$i]}" || exit 1
      rm -rf "/tmp/mt_${alts[$i]}"
      python3 -m pip install -q --root-user-action=ignore --no-deps --target "/tmp/mt_${alts[$i]}" \
        "/tmp/ab_wheel_${alts[$i]}"/minitensor-*.whl >/dev/null || exit 1
    done
    python3 -m pip install -q --root-user-action=ignore --no-deps --force-reinstall /tmp/ab_wheel_new/minitensor-*.whl >/dev/null || exit 1
    rm -rf /tmp/mt_base
    python3 -m pip install -q --root-user-action=ignore --no-deps --target /tmp/mt_base /tmp/ab_wheel_base/minitensor-*.whl >/dev/null || exit 1
    echo "== built both: $(( $(date +%s) - start )) s"
    cd /tmp  # import the installed packages, not the source folder
    if [ "${AB_TESTS:-1}" != 0 ]; then
      xdist=$(python3 -c "import xdist" 2>/dev/null && echo "-n 8")
      # shellcheck disable=SC2086
      python3 -m pytest "$repo/tests/test_softmax.py" -m cuda -q -x -p no:cacheprovider $xdist 2>&1 | tail -3
      echo "== tested the new build: $(( $(date +%s) - start )) s"
      for tag in "${alts[@]}"; do
        [ "${AB_ALT_TESTS:-1}" = 0 ] && break
        # shellcheck disable=SC2086
        PYTHONPATH=/tmp/mt_$tag python3 -m pytest "$repo/tests/test_softmax.py" -m cuda -q -p no:cacheprovider $xdist 2>&1 | tail -3
        echo "== tested the $tag build: $(( $(date +%s) - start )) s"
      done
    fi
    liger_wheel=$(ls "$repo"/.whl/liger_kernel-*.whl 2>/dev/null | head -1)
    if [ -n "${AB_BENCH:-}" ] && [ -n "$liger_wheel" ]; then
      python3 -m pip install -q --root-user-action=ignore --no-deps --target /tmp/ab_liger \
        "$liger_wheel" >/dev/null
    fi
    # --tag TAG: the benchmark on AB_BENCH's cases, a line a case with every contender's kernel µs.
    bench_kernel_times() {
      local tag=$2 out=/tmp/ab_bench_$2 cases=$AB_BENCH
      [[ $cases = /* ]] || cases=$repo/$cases
      PYTHONPATH=${PYTHONPATH:+$PYTHONPATH:}/tmp/ab_liger python3 -m minitensor.bench softmax \
        --device cuda --cases "$cases" --dtype "${AB_BENCH_DTYPES:-float16,bfloat16,float32}" \
        --compare "${AB_BENCH_COMPARE:-torch,compile,liger}" --out "$out" >/dev/null 2>&1 ||
        { echo "$tag: the benchmark failed"; return; }
      python3 -c 'import csv, sys
for r in csv.DictReader(open(sys.argv[2])):
    times = " ".join(f"{k[:-10]} {float(v):7.2f}" for k, v in r.items() if k.endswith("_kernel_us") and v)
    case = "{:>14s} d{} {:9s}".format(r["shape"], r["dim"], r["dtype"])
    print(f"{sys.argv[1]:10s} {case} {times}")' "$tag" "$out/softmax.csv"
    }
    tune() {
      if [ -n "${AB_BENCH:-}" ]; then
        bench_kernel_times "$@"
      else
        python3 "$repo/tools/softmax_tune.py" "$@" 2>&1 | grep -v -i "warn"
      fi
    }
    # The sides: a tag, where its package is installed (empty: the new build, in site-packages)
    # and its tuning overrides (a setting of AB_SETTINGS, on the new build).
    sides=("base|/tmp/mt_base|" "new||")
    for tag in "${alts[@]}"; do sides+=("$tag|/tmp/mt_$tag|"); done
    for setting in ${AB_SETTINGS:-}; do sides+=("${setting#MT_SOFTMAX_}||$setting"); done
    rounds=${AB_ROUNDS:-1}
    : >/tmp/ab_times.log
    for ((round = 1; round <= rounds; round++)); do
      for side in "${sides[@]}"; do
        IFS='|' read -r tag path setting <<<"$side"
        if [ -n "${AB_DEADLINE:-}" ] && [ $(( $(date +%s) - start )) -ge "$AB_DEADLINE" ]; then
          echo "== AB_DEADLINE: stopped before $tag, round $round"
          break 2
        fi
        [ "$rounds" -gt 1 ] && tag=$tag.r$round
        (
          [ -n "$path" ] && export PYTHONPATH=$path
          # shellcheck disable=SC2046
          [ -n "$setting" ] && export $(echo "$setting" | tr ',' ' ')
          tune --tag "$tag" "$@"
        ) | tee -a /tmp/ab_times.log
      done
    done
    echo "== summary (our µs, each side's rounds in order)"
    python3 "$repo/scripts/ab_summary.py" /tmp/ab_times.log |
      if [ -n "${OUT:-}" ]; then tee -a "$OUT/ab_summary.txt"; else cat; fi
    echo "== done: $(( $(date +%s) - start )) s"
    ;;
  *)
    sed -n '2,34p' "$0"
    exit 2
    ;;
esac
