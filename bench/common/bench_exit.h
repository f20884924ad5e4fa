#pragma once
// A benchmark's exit: the status of its run printed to stderr under the benchmark's name when it
// failed, and the process exit code (0 ok, 1 failed). Every bench main() ends with it.

#include <cstdio>

#include "engine/common/status.h"

namespace gcmoe::bench {

inline int exit_code(char const* name, Status const& status) {
  if (status.ok()) {
    return 0;
  }
  std::fprintf(stderr, "%s: %s\n", name, status.to_string().c_str());
  return 1;
}

}  // namespace gcmoe::bench
