#pragma once

namespace gcmoe {
// "0.1.0+<git describe>", written at build time by cmake/write_version.cmake.
char const* version_string();
}  // namespace gcmoe
