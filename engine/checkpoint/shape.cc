#include "engine/checkpoint/shape.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "engine/common/check.h"

namespace gcmoe::checkpoint {

StatusOr<std::int64_t> shape_bytes(std::span<std::int64_t const> shape, DType dtype) {
  constexpr std::int64_t kLimit = std::int64_t{1} << 62;
  std::int64_t bytes = dtype_size(dtype);
  for (std::int64_t const dim : shape) {
    GCMOE_CHECK_ARG(dim >= 0, "negative dimension {} in shape {}", dim, shape_string(shape));
    if (dim != 0 && bytes > kLimit / dim) {
      return invalid_argument_error(fmt::format("shape {} of {} overflows 2^62 bytes",
                                                shape_string(shape), dtype_name(dtype)));
    }
    bytes *= dim;
  }
  return bytes;
}

std::string shape_string(std::span<std::int64_t const> shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

}  // namespace gcmoe::checkpoint
