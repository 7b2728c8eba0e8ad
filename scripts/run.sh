#!/usr/bin/env bash
# The main job: install what is missing, build, run the default platform.
# Extra arguments go to `trn3vp run` (for example --platform, -p key=value).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh release
# The main job: trn3-dev (one chip and its host, power-on to verified
# kernels) unless the arguments name a platform.
case " $* " in
  *" --platform "*|*" --platform="*) exec build/release/bin/trn3vp run "$@" ;;
  *) exec build/release/bin/trn3vp run --platform trn3-dev "$@" ;;
esac
