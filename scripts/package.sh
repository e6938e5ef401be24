#!/usr/bin/env bash
# Builds the opmap Debian package (deploy/package/install.cmake) from a build tree:
#   scripts/package.sh [--no-build] [BUILD_DIR] [OUT_DIR]
#                                          (defaults: build, BUILD_DIR/package-out)
# Configures BUILD_DIR if it is not configured yet, builds the installed targets, and runs
# CPack; prints the .deb's path last. --no-build packages what BUILD_DIR holds as it is
# (the package test uses it, so no binary is relinked while other tests run it). Binaries are stripped in the package; the build tree
# keeps its debug info.
set -euo pipefail
cd "$(dirname "$0")/.."
NO_BUILD=0
if [[ "${1:-}" == "--no-build" ]]; then NO_BUILD=1; shift; fi
BUILD_DIR="${1:-${OPMAP_BUILD_DIR:-build}}"
OUT_DIR="${2:-$BUILD_DIR/package-out}"
for tool in dpkg-deb dpkg-shlibdeps; do
  command -v "$tool" >/dev/null || { echo "package.sh: $tool not found (apt-get install dpkg-dev)" >&2; exit 2; }
done
if [[ $NO_BUILD == 0 ]]; then
  if [[ ! -f "$BUILD_DIR/CMakeCache.txt" ]]; then
    cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
  else
    cmake "$BUILD_DIR" >/dev/null   # refresh the version from git
  fi
  cmake --build "$BUILD_DIR" -j"$(nproc)" --target opmap opmap-agent opmap-collector \
    opmap-demo-infer opmap_inject opmap_package_changelog
elif [[ ! -f "$BUILD_DIR/CPackConfig.cmake" ]]; then
  echo "package.sh: $BUILD_DIR is not a configured build tree" >&2
  exit 2
fi
mkdir -p "$OUT_DIR"
OUT_DIR="$(realpath "$OUT_DIR")"
# CPack installs the whole project; the test and bench targets have no install rules.
(cd "$BUILD_DIR" && cpack -G DEB -B "$OUT_DIR" >/dev/null)
deb=$(ls -t "$OUT_DIR"/opmap_*.deb | head -1)
echo "$deb"
