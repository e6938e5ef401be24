#!/usr/bin/env bash
# Installs the Debian 12 packages opmap builds and tests with. Idempotent: packages that
# are already present are not fetched again, and apt's lists are refreshed only when a
# package is missing.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler libabsl-dev
  libpapi-dev papi-tools libgtest-dev libgmock-dev libsqlite3-dev libsimdjson-dev
  zlib1g-dev libbenchmark-dev libre2-dev chromium libcurl4-openssl-dev openssl
  prometheus-cpp-dev
  clickhouse-server clickhouse-client zookeeper
  dpkg-dev lintian
  clang libclang-rt-14-dev
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "setup: all ${#PACKAGES[@]} packages present"
  exit 0
fi

SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
