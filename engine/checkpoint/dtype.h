#pragma once
// Element types a safetensors checkpoint of the supported releases may hold, with their on-disk
// names ("BF16", "F8_E4M3", ...) and sizes in bytes. Anything else is rejected with a clear error.

#include <cstdint>
#include <string_view>

#include "engine/common/status.h"

namespace gcmoe::checkpoint {

enum class DType {
  kBf16,
  kF32,
  kI64,
  kI8,  // MXFP4 expert weights are stored as I8 (two e2m1 codes per byte)
  kU8,
  kF8E4M3,
  kF8E8M0,  // exponent-only block scales: value = 2^(byte - 127), byte 255 = NaN
};

// The safetensors spelling, e.g. "F8_E4M3".
std::string_view dtype_name(DType dtype);

// Bytes per element.
std::int64_t dtype_size(DType dtype);

// Parses a safetensors dtype name; names the format knows but the engine does not use (F16, BF8…)
// and unknown names are INVALID_ARGUMENT.
StatusOr<DType> dtype_from_name(std::string_view name);

}  // namespace gcmoe::checkpoint
