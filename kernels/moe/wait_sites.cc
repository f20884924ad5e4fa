#include "kernels/moe/wait_sites.h"

#include <cstdio>

namespace gcmoe::kernels {

std::string wait_sites_to_string(unsigned bits) {
  std::string out;
  auto const add = [&out](char const* name) {
    out += out.empty() ? "" : ", ";
    out += name;
  };
  if ((bits & kWaitRows) != 0) {
    add("rows");
  }
  if ((bits & kWaitLayout) != 0) {
    add("layout");
  }
  if ((bits & kWaitCounts) != 0) {
    add("counts");
  }
  if ((bits & kWaitDone) != 0) {
    add("done");
  }
  if ((bits & kWaitBarrier) != 0) {
    add("barrier");
  }
  unsigned const other = bits & ~(kWaitRows | kWaitLayout | kWaitCounts | kWaitDone | kWaitBarrier);
  if (other != 0) {
    char hex[32];
    std::snprintf(hex, sizeof(hex), "other (0x%x)", other);
    add(hex);
  }
  return out;
}

}  // namespace gcmoe::kernels
