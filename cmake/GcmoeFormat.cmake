# `cmake --build <dir> --target format-check` fails when any file differs from .clang-format;
# `--target format` rewrites them.
find_program(GCMOE_CLANG_FORMAT NAMES clang-format clang-format-14)
if(GCMOE_CLANG_FORMAT)
  set(format_cmd ${CMAKE_SOURCE_DIR}/scripts/format.sh ${GCMOE_CLANG_FORMAT})
  add_custom_target(format-check COMMAND ${format_cmd} --check WORKING_DIRECTORY ${CMAKE_SOURCE_DIR} VERBATIM)
  add_custom_target(format COMMAND ${format_cmd} --fix WORKING_DIRECTORY ${CMAKE_SOURCE_DIR} VERBATIM)
  if(GCMOE_BUILD_TESTS AND GCMOE_FORMAT_TEST)
    add_test(NAME format_check COMMAND ${format_cmd} --check WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
    set_tests_properties(format_check PROPERTIES LABELS unit)
  endif()
endif()
