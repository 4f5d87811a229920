#!/bin/bash
# Configure and build Limen into DIR (default: build/) with the test build's options.
# Usage: [LIMEN_BUILD_TARGET=T] build.sh [DIR] [extra cmake arguments...]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$top/build}
shift || true
cmake -S "$top" -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLIMEN_TEST_HOOKS=ON -DLIMEN_WERROR=ON "$@" >/dev/null
cmake --build "$dir" -j"$(nproc)" ${LIMEN_BUILD_TARGET:+--target "$LIMEN_BUILD_TARGET"}
