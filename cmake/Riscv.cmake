# The MCU's RISC-V toolchain (Debian: gcc-riscv64-unknown-elf, picolibc-riscv64-unknown-elf),
# and a function that builds an RV32 program with it.
find_program(TRN3_RISCV_GCC riscv64-unknown-elf-gcc)
find_program(TRN3_RISCV_OBJCOPY riscv64-unknown-elf-objcopy)
if(NOT TRN3_RISCV_GCC OR NOT TRN3_RISCV_OBJCOPY)
  message(FATAL_ERROR "riscv64-unknown-elf-gcc not found: the MCU firmware and its tests need it "
                      "(scripts/install-deps.sh installs gcc-riscv64-unknown-elf and picolibc-riscv64-unknown-elf)")
endif()

# trn3_riscv_program(<name> OUTPUT_DIR <dir> MARCH <march> SOURCES <files...>
#                    [LINK_SCRIPT <ld>] [FLAGS <flags...>] [DEPENDS <files...>])
# builds <dir>/<name>.elf with -mabi=ilp32, the spec headers on the include
# path, and a target <name> for it.
function(trn3_riscv_program name)
  cmake_parse_arguments(P "" "OUTPUT_DIR;MARCH;LINK_SCRIPT" "SOURCES;FLAGS;DEPENDS" ${ARGN})
  set(elf ${P_OUTPUT_DIR}/${name}.elf)
  set(link)
  if(P_LINK_SCRIPT)
    set(link -T ${P_LINK_SCRIPT})
  endif()
  add_custom_command(OUTPUT ${elf}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${P_OUTPUT_DIR}
    COMMAND ${TRN3_RISCV_GCC} -march=${P_MARCH} -mabi=ilp32 -g -Wall -Werror
            -I${PROJECT_SOURCE_DIR}/spec/include ${P_FLAGS} ${link} -o ${elf} ${P_SOURCES}
    DEPENDS ${P_SOURCES} ${P_LINK_SCRIPT} ${P_DEPENDS}
    COMMENT "RV32 ${name}"
    VERBATIM)
  add_custom_target(${name} ALL DEPENDS ${elf})
endfunction()
