# trn3_warnings: the warning set for the project's own targets.
add_library(trn3_warnings INTERFACE)
target_compile_options(trn3_warnings INTERFACE -Wall -Wextra -Wpedantic -Wshadow=local -Wnon-virtual-dtor
  $<$<BOOL:${TRN3_WERROR}>:-Werror>)
