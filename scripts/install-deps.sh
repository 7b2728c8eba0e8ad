#!/usr/bin/env bash
# Installs the Debian packages trn3vp needs, and only those that are missing.
# Idempotent: a second run installs nothing and does not touch the network.
# --fuzz: also clang-19, its sanitizer runtimes and libFuzzer (scripts/fuzz.sh).
set -euo pipefail


packages=(
  build-essential cmake ninja-build ccache pkg-config
  libsystemc-dev verilator catch2
  libspdlog-dev libfmt-dev nlohmann-json3-dev libcli11-dev libfabric-dev
    libbenchmark-dev libmpfr-dev libssl-dev time python3-matplotlib
  python3-dev python3-numpy python3-pytest python3-pybind11 pybind11-dev
  libopenmpi-dev openmpi-bin libprotobuf-dev protobuf-compiler
  gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf gdb-multiarch
  clang-format clang-tidy
)
# clang-19 with --no-install-recommends lacks its sanitizer runtimes (libclang-rt-19-dev).
if [ "${1:-}" = --fuzz ]; then packages+=(clang-19 libclang-rt-19-dev libfuzzer-19-dev); fi


missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
echo "install-deps: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
