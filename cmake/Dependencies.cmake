# Every dependency is a Debian package (scripts/install-deps.sh installs them).
find_package(PkgConfig REQUIRED)
pkg_check_modules(SYSTEMC REQUIRED IMPORTED_TARGET systemc>=2.3.4)
find_package(Threads REQUIRED)
find_package(fmt REQUIRED)
find_package(spdlog REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 REQUIRED)
find_package(OpenSSL 3 REQUIRED)  # libcrypto: the MCU's SHA-256 engine
find_package(verilator 5.006 REQUIRED)
pkg_check_modules(LIBFABRIC REQUIRED IMPORTED_TARGET libfabric>=1.17)  # the NIC's provider (sw/fabric)

# SystemC's headers are not warning-clean: mark them as system headers so that
# -Werror applies to our code only.
add_library(trn3_systemc INTERFACE)
target_link_libraries(trn3_systemc INTERFACE PkgConfig::SYSTEMC Threads::Threads)
set_target_properties(trn3_systemc PROPERTIES INTERFACE_SYSTEM_INCLUDE_DIRECTORIES "${SYSTEMC_INCLUDE_DIRS}")
