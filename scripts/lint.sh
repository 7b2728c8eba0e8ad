#!/usr/bin/env bash
# The tree's style and lint checks (Debian's clang-format and clang-tidy, 14):
#
#   scripts/lint.sh                 is every C/C++ file formatted (.clang-format)? exit 1 naming those that are not
#   scripts/lint.sh --fix           format them in place
#   scripts/lint.sh --tidy [FILE..] clang-tidy (.clang-tidy) over FILEs, default every .cpp in the tree,
#                                   with build/release's compile commands (slow: minutes per dozen files)
set -euo pipefail
cd "$(dirname "$0")/.."
files() { git ls-files --cached --others --exclude-standard '*.c' '*.h' '*.cpp' | grep -v '^tests/mcu/programs/'; }
case "${1:-}" in
  --fix)
    files | xargs clang-format -i
    ;;
  --tidy)
    shift
    [ -f build/release/compile_commands.json ] || { echo "lint: configure build/release first (scripts/build.sh)" >&2; exit 2; }
    if [ $# -eq 0 ]; then set -- $(git ls-files '*.cpp' | grep -v '^tests/\|^bench/\|^rtl/tb/'); fi
    clang-tidy -p build/release --quiet "$@"
    ;;
  "")
    bad=$(files | while read -r f; do clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || echo "$f"; done)
    if [ -n "$bad" ]; then
      echo "lint: not formatted (scripts/lint.sh --fix):"; echo "$bad" | sed 's/^/  /'
      exit 1
    fi
    echo "lint: $(files | wc -l) files formatted"
    ;;
  *) echo "usage: scripts/lint.sh [--fix | --tidy [FILE...]]" >&2; exit 2 ;;
esac
