# SystemC 2.3.4 embeds the C++ standard it was built with in a symbol that
# every translation unit including <systemc> references
# (sc_api_version_2_3_4_cxx201703L for C++17). Linking objects built with
# another standard fails with an obscure undefined reference, so check here,
# once, and say what is wrong.
include(CheckCXXSourceCompiles)
set(CMAKE_REQUIRED_LIBRARIES PkgConfig::SYSTEMC Threads::Threads)
set(CMAKE_REQUIRED_FLAGS "-std=c++${CMAKE_CXX_STANDARD}")
check_cxx_source_compiles("
#include <systemc>
int sc_main(int, char**) { return 0; }
" TRN3_SYSTEMC_LINKS_CXX${CMAKE_CXX_STANDARD})
unset(CMAKE_REQUIRED_LIBRARIES)
unset(CMAKE_REQUIRED_FLAGS)
if(NOT TRN3_SYSTEMC_LINKS_CXX${CMAKE_CXX_STANDARD})
  message(FATAL_ERROR
    "SystemC ${SYSTEMC_VERSION} (${SYSTEMC_LINK_LIBRARIES}) does not link with C++${CMAKE_CXX_STANDARD}. "
    "Debian's libsystemc-dev is built as C++17 (symbol sc_api_version_2_3_4_cxx201703L); "
    "build trn3vp with CMAKE_CXX_STANDARD=17, or use a SystemC built for your standard.")
endif()
