# Test executables: one per area, registered with ctest under a label (unit, gpu, e2e, bench).
# A test that exits 77 is reported by ctest as Skipped (gpu tests on a machine without a GPU).
set(GCMOE_SKIP_CODE 77)

function(gcmoe_add_test name)
  cmake_parse_arguments(ARG "" "LABEL;TIMEOUT;MAIN" "SOURCES;LIBS" ${ARGN})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 300)
  endif()
  add_executable(${name} ${ARG_SOURCES})
  if(ARG_MAIN)
    target_link_libraries(${name} PRIVATE ${ARG_MAIN})
  elseif(ARG_LABEL STREQUAL "gpu")
    target_link_libraries(${name} PRIVATE gcmoe_test_gpu_main)
  else()
    target_link_libraries(${name} PRIVATE gcmoe_test_main)
  endif()
  target_link_libraries(${name} PRIVATE ${ARG_LIBS})
  gcmoe_target_warnings(${name})
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES LABELS ${ARG_LABEL} TIMEOUT ${ARG_TIMEOUT}
                                          SKIP_RETURN_CODE ${GCMOE_SKIP_CODE})
endfunction()

# A GPU test area in a build without CUDA still shows up in ctest, as Skipped, never as a pass.
function(gcmoe_add_gpu_test name)
  if(GCMOE_HAVE_CUDA)
    gcmoe_add_test(${name} LABEL gpu ${ARGN})
  else()
    add_test(NAME ${name} COMMAND sh -c "echo 'SKIPPED: built without CUDA (GCMOE_CUDA=OFF or no nvcc)'; exit ${GCMOE_SKIP_CODE}")
    set_tests_properties(${name} PROPERTIES LABELS gpu SKIP_RETURN_CODE ${GCMOE_SKIP_CODE})
  endif()
endfunction()
