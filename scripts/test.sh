#!/usr/bin/env bash
# The test job: install what is missing, build, run the whole test suite.
# An optional argument picks the preset: release (default), debug or asan.
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-release}"
scripts/install-deps.sh
scripts/build.sh "$preset"
ctest --preset "$preset" -j "$(nproc)"
