#!/usr/bin/env bash
# The main job: install what is missing, build, run the default platform.
# Extra arguments go to `trn3vp run` (for example --platform, -p key=value).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh release
# The main job: nl72x2 (144 chips, 36 hosts, 368 switches: every MCU boots,
# every link trains, every host loads its chips and checks a kernel on each)
# unless the arguments name a platform.
case " $* " in
  *" --platform "*|*" --platform="*) exec build/release/bin/trn3vp run "$@" ;;
  *) exec build/release/bin/trn3vp run --platform nl72x2 "$@" ;;
esac
