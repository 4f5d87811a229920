#!/bin/bash
# The README's test command: install what is missing, build into build/, run the whole
# ctest suite (everything but the `bench` label), then build the ASan+UBSan variant into
# build-asan/ and run the unit and integration tests on it. Non-zero on any failure.
# A test that fails is run once more, alone, before it counts as failed, and the run names
# every test that needed that second run: each is a defect to fix (a test that passes only
# on its second run leans on timing or on what ran before it), not a pass to forget.
#   LIMEN_TEST_NO_ASAN=1   skip the sanitizer pass
#   LIMEN_TEST_NO_FUZZ=1   skip the libFuzzer pass
#   LIMEN_TEST_ARGS="..."  extra ctest arguments (e.g. -R settings)
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
jobs=$(nproc)

"$top/scripts/install-deps.sh" || { echo "test.sh: installing dependencies failed" >&2; exit 1; }

rerun_note=""
# run_ctest DIR CTEST-ARGS...: the whole selection in parallel, then each failed test once
# more on its own; records in $rerun_note which tests passed only on the second run.
run_ctest() {
  local dir=$1; shift
  local failed_log="$dir/Testing/Temporary/LastTestsFailed.log"
  rm -f "$failed_log"
  # shellcheck disable=SC2086
  (cd "$dir" && ctest --output-on-failure -j"$jobs" "$@" ${LIMEN_TEST_ARGS:-}) && return 0
  [ -s "$failed_log" ] || return 1
  local first; first=$(cut -d: -f2 "$failed_log" | sort)
  echo "== rerun in $(basename "$dir")/, one at a time, of the tests that failed: $(echo $first)"
  (cd "$dir" && ctest --output-on-failure --rerun-failed "$@")
  local rc=$?
  local again=""
  # A rerun that passes leaves the old list of failures in place: read it only on failure.
  [ $rc -ne 0 ] && [ -s "$failed_log" ] && again=$(cut -d: -f2 "$failed_log" | sort)
  local flaky; flaky=$(comm -23 <(echo "$first") <(echo "$again") | grep -v '^$')
  [ -n "$flaky" ] && rerun_note+="  $(basename "$dir")/: $(echo $flaky)"$'\n'
  return $rc
}

start=$(date +%s)
echo "== build (build/)"
"$top/scripts/build.sh" "$top/build" || { echo "test.sh: build failed" >&2; exit 1; }
echo "== tests (build/)"
run_ctest "$top/build" -LE bench
rc=$?

# ---- installed tests (scripts/test-installed.sh) -------------------------------------------
# Limen as a package installs it: build-installed/ for /usr without test hooks, staged with
# DESTDIR, laid over /usr in a private mount namespace; the installed tests and the tour run
# with every daemon D-Bus-activated. LIMEN_TEST_NO_INSTALLED=1 skips this block.
if [ "${LIMEN_TEST_NO_INSTALLED:-0}" != 1 ] && [ "$(id -u)" != 0 ]; then
  echo "== installed tests: skipped (a private mount namespace over /usr needs root)"
elif [ "${LIMEN_TEST_NO_INSTALLED:-0}" != 1 ]; then
  echo "== installed tests (build-installed/, laid over /usr in a private mount namespace)"
  "$top/scripts/test-installed.sh"
  rc_installed=$?
  [ $rc -eq 0 ] && rc=$rc_installed
fi
# ---- end of installed tests ----------------------------------------------------------------

if [ "${LIMEN_TEST_NO_ASAN:-0}" != 1 ]; then
  echo "== build (build-asan/, AddressSanitizer + UndefinedBehaviorSanitizer)"
  if "$top/scripts/build.sh" "$top/build-asan" -DLIMEN_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug; then
    echo "== tests (build-asan/)"
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 run_ctest "$top/build-asan" -L 'unit|integration'
    rc_asan=$?
  else
    echo "test.sh: sanitizer build failed" >&2
    rc_asan=1
  fi
  [ $rc -eq 0 ] && rc=$rc_asan
fi
if [ "${LIMEN_TEST_NO_FUZZ:-0}" != 1 ]; then
  # The fuzz targets in a real fuzzing engine: clang's libFuzzer with ASan and UBSan, each
  # for LIMEN_FUZZ_SECONDS (the default build above runs them with a seeded mutation loop).
  echo "== build (build-fuzz/, libFuzzer + AddressSanitizer)"
  if LIMEN_BUILD_TARGET=limen-fuzzers "$top/scripts/build.sh" "$top/build-fuzz" -DCMAKE_C_COMPILER=clang \
       -DCMAKE_CXX_COMPILER=clang++ -DLIMEN_WERROR=OFF -DLIMEN_BUILD_KDE=OFF -DLIMEN_SANITIZE=ON \
       -DLIMEN_FUZZ_ENGINE=libfuzzer; then
    echo "== fuzz (build-fuzz/)"
    (cd "$top/build-fuzz" && ctest -L fuzz --output-on-failure)
    rc_fuzz=$?
  else
    echo "test.sh: fuzz build failed" >&2
    rc_fuzz=1
  fi
  [ $rc -eq 0 ] && rc=$rc_fuzz
fi

if [ -n "$rerun_note" ]; then
  echo "== tests that failed once and passed when run again (each is a defect to fix):"
  printf '%s' "$rerun_note"
else
  echo "== no test needed a second run"
fi
echo "== test.sh finished in $(( $(date +%s) - start )) s, status $rc"
exit $rc
