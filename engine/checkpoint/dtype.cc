#include "engine/checkpoint/dtype.h"

#include <array>
#include <string>

namespace gcmoe::checkpoint {

std::string_view dtype_name(DType dtype) {
  switch (dtype) {
    case DType::kBf16:
      return "BF16";
    case DType::kF32:
      return "F32";
    case DType::kI64:
      return "I64";
    case DType::kI8:
      return "I8";
    case DType::kU8:
      return "U8";
    case DType::kF8E4M3:
      return "F8_E4M3";
    case DType::kF8E8M0:
      return "F8_E8M0";
  }
  return "?";
}

std::int64_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::kBf16:
      return 2;
    case DType::kF32:
      return 4;
    case DType::kI64:
      return 8;
    case DType::kI8:
    case DType::kU8:
    case DType::kF8E4M3:
    case DType::kF8E8M0:
      return 1;
  }
  return 1;
}

StatusOr<DType> dtype_from_name(std::string_view name) {
  static constexpr std::array<DType, 7> kAll = {DType::kBf16,  DType::kF32, DType::kI64,
                                                DType::kI8,    DType::kU8,  DType::kF8E4M3,
                                                DType::kF8E8M0};
  for (DType const dtype : kAll) {
    if (dtype_name(dtype) == name) {
      return dtype;
    }
  }
  return invalid_argument_error("unsupported dtype '" + std::string(name) +
                                "' (supported: BF16, F32, I64, I8, U8, F8_E4M3, F8_E8M0)");
}

}  // namespace gcmoe::checkpoint
