#!/usr/bin/env bash
# Tests under AddressSanitizer and UndefinedBehaviorSanitizer (the asan
# preset: build/asan), leak detection on:
#
#   scripts/sanitize.sh [fast|all]      (default: fast)
#
# fast: the set CI runs (scripts/test.sh): every fuzz corpus replay (the
#   parsers) and the unit tests of the core (params, registers, sparse
#   memory, routers, message links), the numerics, the MCU (its ISS, ELF
#   loader and SHA-256 engine), PCIe links and switches, the DMA engine, the
#   collective schedules, the topology, SRD over Ethernet switches, the NIC
#   on its host (RDMA protection included) and libfabric on that NIC (the
#   trn3vp provider). It builds only what those need (no chip, platforms or
#   RTL).
# all: the whole suite under the sanitizers (as ctest --preset asan); on a
#   quiet 2-core machine its build alone takes about 31 minutes, too long
#   for CI beside the release build (docs/reliability.md has the figures).
set -euo pipefail
cd "$(dirname "$0")/.."
which="${1:-fast}"
case "$which" in
  fast | all) ;;
  *) echo "sanitize: unknown set '$which' (fast, all)" >&2; exit 2 ;;
esac
fast_tests=(
  test_units test_params test_regs test_stats test_sparse_memory test_router test_message_link
  test_protocol_checker test_component
  test_float_format test_stochastic test_mx test_reduce
  test_mcu test_hash_engine
  test_pcie_link test_pcie_fabric test_pcie_flow_control test_pcie_traffic_class test_pcie_flaps
  test_dma_engine test_dma_reduce test_dma_wait test_dma_timing_only
  test_plan test_plan_algorithms test_rings test_level_orders test_topology
  test_srd test_nitro_nic test_libfabric
  test_workload
)
# Every fuzz target fuzz/CMakeLists.txt declares.
read -ra fuzz_targets <<<"$(sed -n 's/^set(trn3_fuzz_targets \(.*\))$/\1/p' fuzz/CMakeLists.txt)"
cmake --preset asan >/dev/null
if [ "$which" = all ]; then
  cmake --build --preset asan -j "$(nproc)"
  exec ctest --preset asan -j "$(nproc)"
fi
targets=("${fast_tests[@]}")
for t in "${fuzz_targets[@]}"; do targets+=("fuzz_replay_$t"); done
cmake --build --preset asan -j "$(nproc)" --target "${targets[@]}"
# ctest names: "<binary>:<test case>" and "fuzz corpus: <target>".
regex="^(fuzz corpus: |($(IFS='|'; echo "${fast_tests[*]}")):)"
exec ctest --preset asan -j "$(nproc)" -R "$regex"
