#include "engine/model/glm/weight_reader.h"

#include <fmt/format.h>

#include <cstring>
#include <span>

#include "engine/common/check.h"
#include "engine/formats/bf16.h"
#include "engine/formats/fp8_block.h"

namespace gcmoe::model::glm {
namespace {

std::vector<float> widen_bf16(std::span<std::byte const> bytes) {
  std::vector<float> out(bytes.size() / 2);
  for (std::size_t i = 0; i < out.size(); ++i) {
    std::uint16_t bits = 0;
    std::memcpy(&bits, bytes.data() + 2 * i, 2);
    out[i] = formats::decode_bf16(bits);
  }
  return out;
}

std::vector<float> copy_f32(std::span<std::byte const> bytes) {
  std::vector<float> out(bytes.size() / 4);
  std::memcpy(out.data(), bytes.data(), out.size() * 4);
  return out;
}

}  // namespace

StatusOr<std::vector<std::byte>> WeightReader::bytes(TensorSpec const& spec) const {
  GCMOE_ASSIGN_OR_RETURN(WeightPlacement const placement, loaded_.find(spec.name));
  GCMOE_ASSIGN_OR_RETURN(std::span<std::byte const> const data, loaded_.host_bytes(placement));
  if (static_cast<std::int64_t>(data.size()) != spec.bytes()) {
    return data_loss_error(fmt::format("tensor '{}' holds {} bytes, {} expects {}", spec.name,
                                       data.size(), describe(spec), spec.bytes()));
  }
  return std::vector<std::byte>(data.begin(), data.end());
}

StatusOr<std::vector<float>> WeightReader::tensor(TensorSpec const& spec) const {
  GCMOE_ASSIGN_OR_RETURN(std::vector<std::byte> const data, bytes(spec));
  switch (spec.dtype) {
    case checkpoint::DType::kBf16:
      return widen_bf16(data);
    case checkpoint::DType::kF32:
      return copy_f32(data);
    case checkpoint::DType::kI64:
    case checkpoint::DType::kI8:
    case checkpoint::DType::kU8:
    case checkpoint::DType::kF8E4M3:
    case checkpoint::DType::kF8E8M0:
      break;
  }
  return unimplemented_error(
      fmt::format("tensor '{}' ({}) is not a BF16/F32 tensor", spec.name, describe(spec)));
}

StatusOr<DenseLinear> WeightReader::linear(LinearSpec const& spec) const {
  DenseLinear out{.w = {}, .out = spec.dims.rows, .in = spec.dims.cols};
  switch (spec.format.encoding) {
    case config::WeightEncoding::kBf16: {
      GCMOE_ASSIGN_OR_RETURN(out.w, tensor(spec.weight));
      break;
    }
    case config::WeightEncoding::kFp8E4m3: {
      GCMOE_CHECK_ARG(spec.scale.has_value(), "FP8 weight '{}' has no scale tensor",
                      spec.weight.name);
      GCMOE_ASSIGN_OR_RETURN(std::vector<std::byte> const codes_bytes, bytes(spec.weight));
      GCMOE_ASSIGN_OR_RETURN(std::vector<std::byte> const scale_bytes, bytes(*spec.scale));
      std::span<std::uint8_t const> const codes(
          reinterpret_cast<std::uint8_t const*>(codes_bytes.data()), codes_bytes.size());
      formats::BlockShape const block{spec.format.block_rows, spec.format.block_cols};
      out.w.resize(static_cast<std::size_t>(spec.dims.elements()));
      if (spec.format.scale == config::ScaleKind::kF32) {
        std::vector<float> const scale_inv = copy_f32(scale_bytes);
        GCMOE_RETURN_IF_ERROR(
            formats::dequantize_fp8_f32(codes, scale_inv, spec.dims, block, out.w));
      } else {
        std::span<std::uint8_t const> const scales(
            reinterpret_cast<std::uint8_t const*>(scale_bytes.data()), scale_bytes.size());
        GCMOE_RETURN_IF_ERROR(formats::dequantize_fp8_e8m0(codes, scales, spec.dims, block, out.w));
      }
      break;
    }
    case config::WeightEncoding::kMxfp4:
      return unimplemented_error(
          fmt::format("MXFP4 weight '{}' is not supported by the GLM CPU step", spec.weight.name));
  }
  return out;
}

}  // namespace gcmoe::model::glm
