# `gcmoe --version` prints git describe, regenerated on every build (rewritten only when it changes).
set(GCMOE_VERSION_CC ${CMAKE_BINARY_DIR}/generated/gcmoe_version.cc)
add_custom_target(gcmoe_version_gen
  COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${CMAKE_SOURCE_DIR} -DOUTPUT=${GCMOE_VERSION_CC}
          -DBASE_VERSION=${PROJECT_VERSION} -P ${CMAKE_SOURCE_DIR}/cmake/write_version.cmake
  BYPRODUCTS ${GCMOE_VERSION_CC}
  COMMENT "gcmoe version from git describe")
