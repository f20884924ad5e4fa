#pragma once
// Shape arithmetic shared by the reader and the writer, overflow-checked: a corrupted header can
// carry any dimensions, and an overflowing product must be an error, never a wrong byte count.

#include <cstdint>
#include <span>
#include <string>

#include "engine/checkpoint/dtype.h"
#include "engine/common/status.h"

namespace gcmoe::checkpoint {

// Bytes of a tensor of `shape` and `dtype`; INVALID_ARGUMENT for a negative dimension or when the
// product exceeds 2^62 bytes.
StatusOr<std::int64_t> shape_bytes(std::span<std::int64_t const> shape, DType dtype);

// "[2304, 2560]".
std::string shape_string(std::span<std::int64_t const> shape);

}  // namespace gcmoe::checkpoint
