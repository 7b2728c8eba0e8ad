#!/usr/bin/env bash
# Fuzzes the platform's parsers with libFuzzer (clang-19, ASan + UBSan):
#
#   scripts/fuzz.sh [target|all] [seconds] [executions]
#
# (default: all, 60 s each; with executions, a target stops at whichever
# comes first, so `scripts/fuzz.sh units 3600 10000000` runs 10 million
# inputs unless the hour ends before.)
#
# Targets (fuzz/targets): isa_stream (the assembler), isa_decode (encoded
# instructions), elf_image (firmware ELF files), units (param values with
# units), config (config files: JSON objects of param values), srd_packet
# (the scale-out network's frames as the NIC receives them), config_space (a
# PCIe function's configuration space under any config requests),
# chakra_trace (Chakra execution traces), driver_mailbox (the driver's
# parsing of the firmware's mailbox answers), command_line (trn3vp's
# command line), firmware_mailbox (the firmware's mailbox commands, the
# real firmware on the ISS). Installs
# clang-19 and libfuzzer-19-dev when missing, builds build/fuzz, runs each target from a working corpus seeded with
# fuzz/corpus/<target> (new inputs stay in build/fuzz/corpus), and prints
# each target's executions, coverage and crashes; a crash's input is left
# in build/fuzz/crash-*. Exit 1 if a target crashed, 2 on bad arguments.
set -euo pipefail
cd "$(dirname "$0")/.."
# Every target fuzz/CMakeLists.txt declares.
read -ra targets <<<"$(sed -n 's/^set(trn3_fuzz_targets \(.*\))$/\1/p' fuzz/CMakeLists.txt)"
which="${1:-all}"
seconds="${2:-60}"
runs="${3:--1}"
case "$seconds" in ''|*[!0-9]*) echo "fuzz: seconds must be a whole number, not '$seconds'" >&2; exit 2 ;; esac
case "$runs" in -1) ;; ''|*[!0-9]*) echo "fuzz: executions must be a whole number, not '$runs'" >&2; exit 2 ;; esac
if [ "$which" != all ]; then
  case " ${targets[*]} " in
    *" $which "*) targets=("$which") ;;
    *) echo "fuzz: unknown target '$which' (${targets[*]}, all)" >&2; exit 2 ;;
  esac
fi
scripts/install-deps.sh --fuzz
# firmware_mailbox runs the build's firmware on the ISS.
case " ${targets[*]} " in
  *" firmware_mailbox "*)
    cmake --preset release >/dev/null
    cmake --build --preset release --target trn3_firmware_digest >/dev/null
    export TRN3_FUZZ_FIRMWARE_DIR="$PWD/build/release/firmware" ;;
esac
cmake -S fuzz/libfuzzer -B build/fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++-19 -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build/fuzz
failed=0
for t in "${targets[@]}"; do
  corpus="build/fuzz/corpus/$t"
  mkdir -p "$corpus"
  cp -n fuzz/corpus/"$t"/* "$corpus"/ 2>/dev/null || true
  log="build/fuzz/$t.log"
  # Inputs as long as the parser's real ones need: a stream of a few dozen
  # lines, one encoded instruction (a core decodes each on its own, so one
  # is the unit: ten an input ran a tenth as many inputs for the same
  # instructions), a firmware ELF, a config file, a param value.
  case "$t" in
    isa_stream) max_len=4096 ;; isa_decode) max_len=192 ;; elf_image) max_len=65536 ;; config) max_len=2048 ;;
    srd_packet) max_len=9000 ;; driver_mailbox) max_len=2048 ;; firmware_mailbox) max_len=1024 ;;
    *) max_len=256 ;;
  esac
  # firmware_mailbox runs SystemC, whose threads switch stacks (QuickThreads)
  # without telling ASan: its fake stacks (use after return) break on them,
  # and LeakSanitizer at exit misses the main stack's roots and reports
  # libFuzzer's own driver data. Both off for it; its corpus replays under
  # the asan preset with leak detection on (scripts/sanitize.sh).
  # No allocation stacks are recorded (malloc_context_size=0): unwinding
  # at every allocation took a fifth of command_line's time, and a crash
  # keeps its input, which replays with them: build/fuzz/fuzz_<t> <input>.
  asan="detect_leaks=1:malloc_context_size=0"
  [ "$t" = firmware_mailbox ] && asan="detect_leaks=0:detect_stack_use_after_return=0:malloc_context_size=0"
  set +e
  start=$SECONDS
  (cd build/fuzz && UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ASAN_OPTIONS=$asan \
    ./fuzz_"$t" -max_total_time="$seconds" -runs="$runs" -max_len="$max_len" -print_final_stats=1 -artifact_prefix=./crash-"$t"- \
    "corpus/$t" >"$t.log" 2>&1)
  rc=$?
  elapsed=$((SECONDS - start))
  set -e
  executed=$(sed -nE 's/^stat::number_of_executed_units: *([0-9]+)/\1/p' "$log" | tail -1)
  cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | cut -d' ' -f2)
  printf 'fuzz %-11s %12s executions in %s s, coverage %s edges, corpus %s files: %s\n' "$t" "${executed:-?}" \
    "$elapsed" "${cov:-?}" "$(ls "$corpus" | wc -l)" "$([ $rc -eq 0 ] && echo 'no crash' || echo "CRASHED (rc $rc, $log)")"
  [ $rc -eq 0 ] || failed=1
done
exit $failed
