#!/usr/bin/env bash
# The README's test command: install what is needed, configure, build with -j2 and run
# every test. Tests that read ../shared (real GPU traces) skip with a message when it is
# absent.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
BUILD_DIR="${OPMAP_BUILD_DIR:-build}"
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build "$BUILD_DIR" -j2
ctest --test-dir "$BUILD_DIR" --output-on-failure -j2 --timeout 600
