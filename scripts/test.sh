#!/usr/bin/env bash
# The test job: install what is missing, build, run the whole test suite;
# with the release preset, then the sanitizers' share (scripts/sanitize.sh
# fast: the parsers and the models' unit tests under ASan and UBSan).
# An optional argument picks the preset: release (default), debug or asan.
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-release}"
scripts/install-deps.sh
scripts/build.sh "$preset"
ctest --preset "$preset" -j "$(nproc)"
if [ "$preset" = release ]; then scripts/sanitize.sh fast; fi
