#include "engine/tiny/materialize.h"

#include <bit>
#include <numeric>
#include <span>
#include <utility>

#include "engine/common/check.h"
#include "engine/formats/bf16.h"
#include "engine/formats/fp8_block.h"
#include "engine/formats/mxfp4.h"
#include "engine/tiny/tiny_random.h"

namespace gcmoe::tiny {
namespace {

static_assert(std::endian::native == std::endian::little,
              "safetensors data is little-endian; the writer copies host memory");

template <typename T>
std::span<std::byte const> bytes_of(std::vector<T> const& values) {
  return std::as_bytes(std::span<T const>(values));
}

StatusOr<formats::MatrixDims> matrix_dims(PlannedTensor const& tensor) {
  GCMOE_CHECK_ARG(tensor.shape.size() == 2, "{}: a quantized weight must be 2-D, got {} dims",
                  tensor.name, tensor.shape.size());
  return formats::MatrixDims{tensor.shape[0], tensor.shape[1]};
}

// Each row holds k distinct experts, drawn by a partial Fisher–Yates shuffle.
std::vector<std::int64_t> expert_table(PlannedTensor const& tensor, TinyRandom& random) {
  std::int64_t const rows = tensor.shape[0];
  std::int64_t const k = tensor.shape[1];
  auto const experts = static_cast<std::int64_t>(tensor.init.a);
  std::vector<std::int64_t> ids(static_cast<std::size_t>(experts));
  std::vector<std::int64_t> table;
  table.reserve(static_cast<std::size_t>(rows * k));
  for (std::int64_t r = 0; r < rows; ++r) {
    std::iota(ids.begin(), ids.end(), std::int64_t{0});
    for (std::int64_t j = 0; j < k; ++j) {
      std::int64_t const pick = j + random.below(experts - j);
      std::swap(ids[static_cast<std::size_t>(j)], ids[static_cast<std::size_t>(pick)]);
      table.push_back(ids[static_cast<std::size_t>(j)]);
    }
  }
  return table;
}

StatusOr<std::vector<std::int64_t>> draw_table(PlannedTensor const& tensor, std::uint64_t seed) {
  GCMOE_CHECK_ARG(tensor.shape.size() == 2 && tensor.init.kind == InitKind::kExpertTable &&
                      tensor.shape[1] <= static_cast<std::int64_t>(tensor.init.a),
                  "{}: an expert table is [rows, k] with k <= experts", tensor.name);
  TinyRandom random(seed, tensor.name);
  return expert_table(tensor, random);
}

}  // namespace

StatusOr<std::vector<float>> draw_values(PlannedTensor const& tensor, std::uint64_t const seed) {
  std::int64_t elements = 1;
  for (std::int64_t const d : tensor.shape) {
    GCMOE_CHECK_ARG(d > 0, "{}: dimension {} must be positive", tensor.name, d);
    elements *= d;
  }
  switch (tensor.init.kind) {
    case InitKind::kExpertTable: {
      GCMOE_ASSIGN_OR_RETURN(std::vector<std::int64_t> const table, draw_table(tensor, seed));
      return std::vector<float>(table.begin(), table.end());
    }
    case InitKind::kNormal:
    case InitKind::kUniform:
      break;
  }
  TinyRandom random(seed, tensor.name);
  std::vector<float> values(static_cast<std::size_t>(elements));
  for (float& v : values) {
    v = static_cast<float>(tensor.init.kind == InitKind::kNormal
                               ? random.normal(tensor.init.a, tensor.init.b)
                               : tensor.init.a +
                                     (tensor.init.b - tensor.init.a) * random.uniform());
  }
  return values;
}

Status add_planned_tensor(PlannedTensor const& tensor, std::uint64_t const seed,
                          checkpoint::SafetensorsWriter& writer) {
  std::vector<StoredTensor> const stored = stored_tensors(tensor);
  // Adds stored[0] with `data` and, when there is one, the scale sibling stored[1] with `scales`.
  auto const add = [&](auto const& data, auto const& scales) -> Status {
    GCMOE_RETURN_IF_ERROR(
        writer.add(stored[0].name, stored[0].dtype, stored[0].shape, bytes_of(data)));
    return writer.add(stored[1].name, stored[1].dtype, stored[1].shape, bytes_of(scales));
  };
  auto const add_one = [&](auto const& data) {
    return writer.add(stored[0].name, stored[0].dtype, stored[0].shape, bytes_of(data));
  };
  if (tensor.storage == Storage::kI64) {
    GCMOE_ASSIGN_OR_RETURN(std::vector<std::int64_t> const table, draw_table(tensor, seed));
    return add_one(table);
  }
  GCMOE_ASSIGN_OR_RETURN(std::vector<float> const values, draw_values(tensor, seed));
  switch (tensor.storage) {
    case Storage::kI64:
      break;  // written above: tables are not drawn as floats
    case Storage::kF32:
      return add_one(values);
    case Storage::kBf16: {
      std::vector<std::uint16_t> bits(values.size());
      for (std::size_t i = 0; i < values.size(); ++i) {
        bits[i] = formats::encode_bf16(values[i]);
      }
      return add_one(bits);
    }
    case Storage::kFp8E8m0: {
      GCMOE_ASSIGN_OR_RETURN(formats::MatrixDims const dims, matrix_dims(tensor));
      GCMOE_ASSIGN_OR_RETURN(formats::Fp8E8m0Blocks const q,
                             formats::quantize_fp8_e8m0(values, dims, tensor.block));
      return add(q.codes, q.scales);
    }
    case Storage::kFp8F32: {
      GCMOE_ASSIGN_OR_RETURN(formats::MatrixDims const dims, matrix_dims(tensor));
      GCMOE_ASSIGN_OR_RETURN(formats::Fp8F32Blocks const q,
                             formats::quantize_fp8_f32(values, dims, tensor.block));
      return add(q.codes, q.scale_inv);
    }
    case Storage::kMxfp4: {
      GCMOE_ASSIGN_OR_RETURN(formats::MatrixDims const dims, matrix_dims(tensor));
      GCMOE_ASSIGN_OR_RETURN(formats::Mxfp4Weight const q, formats::quantize_mxfp4(values, dims));
      return add(q.packed, q.scales);
    }
  }
  return internal_error(fmt::format("{}: I64 tensor reached the float path", tensor.name));
}

}  // namespace gcmoe::tiny
