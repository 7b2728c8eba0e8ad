#!/usr/bin/env bash
# The main job: install what is missing, build, run the default platform.
# Extra arguments go to `trn3vp run` (for example --platform, -p key=value).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh release
exec build/release/bin/trn3vp run "$@"
