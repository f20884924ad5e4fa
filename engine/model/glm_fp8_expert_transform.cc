#include "engine/model/glm_fp8_expert_transform.h"

#include <cstring>
#include <vector>

#include "engine/common/check.h"
#include "kernels/moe/fp8_expert_wgmma_layout.h"
#include "kernels/moe/packed_expert_sections.h"

namespace gcmoe::model {
namespace {

constexpr std::int64_t kScaleBlock = 128;

Status check_linear(LinearSpec const& linear) {
  config::WeightFormat const& f = linear.format;
  GCMOE_CHECK_ARG(f.encoding == config::WeightEncoding::kFp8E4m3 &&
                      f.scale == config::ScaleKind::kF32 && f.block_rows == kScaleBlock &&
                      f.block_cols == kScaleBlock && linear.scale.has_value(),
                  "{}: the FP8 expert GEMM takes FP8 e4m3 with f32 128x128 scales, got {}",
                  linear.weight.name, config::describe(f));
  GCMOE_CHECK_ARG(linear.dims.cols % kernels::kChunkK == 0, "{}: K = {} is not a multiple of {}",
                  linear.weight.name, linear.dims.cols, kernels::kChunkK);
  return Status();
}

// The scales as floats: safetensors offsets need not be 4-byte aligned, so they are copied out
// of the mapping rather than reinterpreted in place (a few KB per weight).
std::vector<float> scales_of(checkpoint::TensorView const& view) {
  std::vector<float> scales(view.bytes.size() / sizeof(float));
  std::memcpy(scales.data(), view.bytes.data(), scales.size() * sizeof(float));
  return scales;
}

kernels::Fp8WeightView weight_view(LinearSpec const& spec, checkpoint::TensorView const& codes,
                                   std::vector<float> const& scales) {
  return kernels::Fp8WeightView{
      spec.dims,
      {reinterpret_cast<std::uint8_t const*>(codes.bytes.data()), codes.bytes.size()},
      scales};
}

void copy_section(kernels::PackedExpertWeights const& packed, std::int64_t const codes_at,
                  std::int64_t const scales_at, std::span<std::byte> out) {
  std::memcpy(out.data() + codes_at, packed.bytes.data(), packed.bytes.size());
  std::memcpy(out.data() + scales_at, packed.scales.data(), packed.scales.size() * sizeof(float));
}

}  // namespace

StatusOr<GlmFp8PackedLayout> glm_fp8_packed_layout(SwigluSpec const& expert) {
  GCMOE_RETURN_IF_ERROR(check_linear(expert.gate));
  GCMOE_RETURN_IF_ERROR(check_linear(expert.up));
  GCMOE_RETURN_IF_ERROR(check_linear(expert.down));
  std::int64_t const inter = expert.gate.dims.rows;
  std::int64_t const hidden = expert.gate.dims.cols;
  GCMOE_CHECK_ARG(expert.up.dims == expert.gate.dims &&
                      expert.down.dims == (formats::MatrixDims{hidden, inter}),
                  "{}: gate/up [{}, {}] and down [{}, {}] do not form one expert",
                  expert.gate.weight.name, inter, hidden, expert.down.dims.rows,
                  expert.down.dims.cols);
  GCMOE_CHECK_ARG(inter % 128 == 0 && hidden % 128 == 0,
                  "{}: intermediate {} / hidden {} do not tile (multiples of 128)",
                  expert.gate.weight.name, inter, hidden);
  GlmFp8PackedLayout layout;
  layout.l1_tiles = inter / 32;  // 64 rows: 32 gate + 32 up outputs
  layout.l1_chunks = hidden / kernels::kChunkK;
  layout.l2_tiles = hidden / kernels::kWgmmaTileRows;
  layout.l2_chunks = inter / kernels::kChunkK;
  // The kernels' section layout (one definition for loader, tests and benchmarks).
  kernels::PackedExpertSections const s = kernels::fp8_expert_sections(hidden, inter);
  layout.l1_codes = s.l1_codes;
  layout.l1_scales = s.l1_scales;
  layout.l2_codes = s.l2_codes;
  layout.l2_scales = s.l2_scales;
  layout.total = s.stride;
  return layout;
}

StatusOr<std::int64_t> GlmFp8ExpertTransform::packed_bytes(SwigluSpec const& expert) const {
  GCMOE_ASSIGN_OR_RETURN(GlmFp8PackedLayout const layout, glm_fp8_packed_layout(expert));
  return layout.total;
}

Status GlmFp8ExpertTransform::pack(SwigluSpec const& spec, ExpertTensorViews const& expert,
                                   std::span<std::byte> out) const {
  GCMOE_ASSIGN_OR_RETURN(GlmFp8PackedLayout const layout, glm_fp8_packed_layout(spec));
  GCMOE_CHECK_ARG(static_cast<std::int64_t>(out.size()) == layout.total,
                  "{}: packed expert needs {} bytes, got {}", spec.gate.weight.name, layout.total,
                  out.size());
  std::vector<float> const gate_scales = scales_of(expert.gate_scale);
  std::vector<float> const up_scales = scales_of(expert.up_scale);
  std::vector<float> const down_scales = scales_of(expert.down_scale);
  GCMOE_ASSIGN_OR_RETURN(
      kernels::PackedExpertWeights const l1,
      kernels::pack_gate_up_wgmma(weight_view(spec.gate, expert.gate, gate_scales),
                                  weight_view(spec.up, expert.up, up_scales)));
  GCMOE_ASSIGN_OR_RETURN(
      kernels::PackedExpertWeights const l2,
      kernels::pack_down_wgmma(weight_view(spec.down, expert.down, down_scales)));
  // Padding between sections is zeroed so the packed bytes are a pure function of the expert.
  std::memset(out.data(), 0, out.size());
  copy_section(l1, layout.l1_codes, layout.l1_scales, out);
  copy_section(l2, layout.l2_codes, layout.l2_scales, out);
  return Status();
}

}  // namespace gcmoe::model
