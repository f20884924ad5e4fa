# Warnings for the project's own targets (generated protobuf code is left alone).
function(gcmoe_target_warnings target)
  set(cxx_warnings -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wimplicit-fallthrough)
  # GCC 12 at -O2 reports std::variant storage (StatusOr) as maybe-uninitialized through inlined
  # moves: a known false positive (GCC bug 105562 family) that -Werror would turn into a failure.
  # At -O3 (the gpu preset) it also reports `"literal" + std::string` as an overlapping memcpy
  # (-Wrestrict, GCC bug 105329): same treatment.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    list(APPEND cxx_warnings -Wno-maybe-uninitialized -Wno-restrict)
  endif()
  if(GCMOE_WERROR)
    list(APPEND cxx_warnings -Werror)
  endif()
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:${cxx_warnings}>)
  if(GCMOE_HAVE_CUDA)
    set(cuda_warnings -Xcompiler=-Wall,-Wextra)
    if(GCMOE_WERROR)
      list(APPEND cuda_warnings -Werror=all-warnings)
    endif()
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:${cuda_warnings}>)
  endif()
endfunction()
