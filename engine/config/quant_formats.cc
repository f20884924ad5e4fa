#include "engine/config/quant_formats.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <string>
#include <vector>

#include "engine/common/check.h"

namespace gcmoe::config {
namespace {

// FP8 weight blocks: powers of two from 16 to 1024 elements per side (the releases use 32, 128).
constexpr std::int64_t kMinBlock = 16;
constexpr std::int64_t kMaxBlock = 1024;
// MXFP4 (OCP MX): one e8m0 scale per 32 consecutive K elements.
constexpr std::int64_t kMxBlock = 32;

bool valid_block(std::int64_t size) {
  return size >= kMinBlock && size <= kMaxBlock && (size & (size - 1)) == 0;
}

Status check_choice(JsonFields const& fields, char const* key,
                    std::optional<std::string> const& value, std::string_view wanted) {
  if (value && *value != wanted) {
    return fields.field_error(key,
                              fmt::format("= '{}' is not supported (only '{}')", *value, wanted));
  }
  return Status();
}

}  // namespace

StatusOr<QuantFormats> parse_quant_formats(std::optional<JsonFields> const& quantization,
                                           JsonFields const& expert_dtype_owner) {
  QuantFormats formats;
  if (!quantization) {
    return formats;
  }
  JsonFields const& quant = *quantization;
  GCMOE_ASSIGN_OR_RETURN(std::string const method, quant.get_string("quant_method"));
  if (method != "fp8") {
    return quant.field_error("quant_method",
                             fmt::format("= '{}' is not supported (only 'fp8')", method));
  }
  GCMOE_ASSIGN_OR_RETURN(auto const fmt_name, quant.get_optional_string("fmt"));
  GCMOE_RETURN_IF_ERROR(check_choice(quant, "fmt", fmt_name, "e4m3"));
  GCMOE_ASSIGN_OR_RETURN(auto const activation, quant.get_optional_string("activation_scheme"));
  GCMOE_RETURN_IF_ERROR(check_choice(quant, "activation_scheme", activation, "dynamic"));
  GCMOE_ASSIGN_OR_RETURN(auto const scale_fmt, quant.get_optional_string("scale_fmt"));
  GCMOE_RETURN_IF_ERROR(check_choice(quant, "scale_fmt", scale_fmt, "ue8m0"));

  if (!quant.has("weight_block_size")) {
    return quant.field_error("weight_block_size", "is missing");
  }
  GCMOE_ASSIGN_OR_RETURN(std::vector<std::int64_t> const block,
                         quant.get_int_list_or_empty("weight_block_size"));
  if (block.size() != 2 || !valid_block(block[0]) || !valid_block(block[1])) {
    return quant.field_error("weight_block_size",
                             fmt::format("= [{}] must be two powers of two in [{}, {}]",
                                         fmt::join(block, ", "), kMinBlock, kMaxBlock));
  }
  formats.dense = WeightFormat{WeightEncoding::kFp8E4m3,
                               scale_fmt ? ScaleKind::kE8m0 : ScaleKind::kF32, block[0], block[1]};

  GCMOE_ASSIGN_OR_RETURN(auto const expert_dtype,
                         expert_dtype_owner.get_optional_string("expert_dtype"));
  if (!expert_dtype) {
    formats.experts = formats.dense;
  } else if (*expert_dtype == "fp4") {
    formats.experts = WeightFormat{WeightEncoding::kMxfp4, ScaleKind::kE8m0, 1, kMxBlock};
  } else if (*expert_dtype == "fp8") {
    formats.experts = WeightFormat{WeightEncoding::kFp8E4m3, ScaleKind::kF32, block[0], block[1]};
  } else {
    return expert_dtype_owner.field_error(
        "expert_dtype", fmt::format("= '{}' is not supported (fp4 or fp8)", *expert_dtype));
  }
  return formats;
}

}  // namespace gcmoe::config
