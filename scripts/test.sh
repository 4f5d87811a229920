#!/bin/bash
# The README's test command: install what is missing, build into build/, run the whole
# ctest suite (everything but the `bench` label), then build the ASan+UBSan variant into
# build-asan/ and run the unit and integration tests on it. Non-zero on any failure.
# A failing test is run once more before it counts as failed: the dialog tests under Xvfb
# share two cores with everything else and can miss a window by timing; a real failure
# fails twice.
#   LIMEN_TEST_NO_ASAN=1   skip the sanitizer pass
#   LIMEN_TEST_ARGS="..."  extra ctest arguments (e.g. -R settings)
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
jobs=$(nproc)

"$top/scripts/install-deps.sh" || { echo "test.sh: installing dependencies failed" >&2; exit 1; }

start=$(date +%s)
echo "== build (build/)"
"$top/scripts/build.sh" "$top/build" || { echo "test.sh: build failed" >&2; exit 1; }
echo "== tests (build/)"
# shellcheck disable=SC2086
(cd "$top/build" && ctest -LE bench --output-on-failure --repeat until-pass:2 -j"$jobs" ${LIMEN_TEST_ARGS:-})
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
    # shellcheck disable=SC2086
    (cd "$top/build-asan" && ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
       ctest -L 'unit|integration' --output-on-failure --repeat until-pass:2 -j"$jobs" ${LIMEN_TEST_ARGS:-})
    rc_asan=$?
  else
    echo "test.sh: sanitizer build failed" >&2
    rc_asan=1
  fi
  [ $rc -eq 0 ] && rc=$rc_asan
fi
echo "== test.sh finished in $(( $(date +%s) - start )) s, status $rc"
exit $rc
