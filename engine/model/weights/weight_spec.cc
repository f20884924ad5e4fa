#include "engine/model/weights/weight_spec.h"

#include <fmt/format.h>

#include "engine/checkpoint/shape.h"
#include "engine/common/check.h"

namespace gcmoe::model {
namespace {

// OCP MX: one e8m0 scale per 32 consecutive K elements; two e2m1 codes per byte.
constexpr std::int64_t kMxBlock = 32;

std::int64_t ceil_div(std::int64_t const a, std::int64_t const b) {
  return (a + b - 1) / b;
}

}  // namespace

std::int64_t TensorSpec::bytes() const {
  std::int64_t elements = 1;
  for (std::int64_t const d : shape) {
    elements *= d;
  }
  return elements * checkpoint::dtype_size(dtype);
}

std::int64_t LinearSpec::bytes() const {
  return weight.bytes() + (scale ? scale->bytes() : 0);
}

std::int64_t SwigluSpec::bytes() const {
  return gate.bytes() + up.bytes() + down.bytes();
}

StatusOr<LinearSpec> linear_spec(std::string const& prefix, std::int64_t const out,
                                 std::int64_t const in, config::WeightFormat const& format,
                                 ScaleNaming const naming) {
  using checkpoint::DType;
  GCMOE_CHECK_ARG(out > 0 && in > 0, "{}: linear shape [{}, {}] must be positive", prefix, out, in);
  LinearSpec linear;
  linear.format = format;
  linear.dims = {out, in};
  linear.weight = {prefix + ".weight", DType::kBf16, {out, in}};
  std::string const scale_name =
      prefix + (naming == ScaleNaming::kWeightScaleInv ? ".weight_scale_inv" : ".scale");
  switch (format.encoding) {
    case config::WeightEncoding::kBf16:
      break;
    case config::WeightEncoding::kFp8E4m3: {
      GCMOE_CHECK_ARG(format.block_rows > 0 && format.block_cols > 0 &&
                          format.scale != config::ScaleKind::kNone,
                      "{}: FP8 weights need block scales", prefix);
      linear.weight.dtype = DType::kF8E4M3;
      DType const scale_dtype =
          format.scale == config::ScaleKind::kE8m0 ? DType::kF8E8M0 : DType::kF32;
      linear.scale =
          TensorSpec{scale_name,
                     scale_dtype,
                     {ceil_div(out, format.block_rows), ceil_div(in, format.block_cols)}};
      break;
    }
    case config::WeightEncoding::kMxfp4:
      GCMOE_CHECK_ARG(in % kMxBlock == 0, "{}: MXFP4 K = {} is not a multiple of {}", prefix, in,
                      kMxBlock);
      linear.weight = {prefix + ".weight", DType::kI8, {out, in / 2}};
      linear.scale = TensorSpec{prefix + ".scale", DType::kF8E8M0, {out, in / kMxBlock}};
      break;
  }
  return linear;
}

void for_each_tensor(SwigluSpec const& mlp, std::function<void(TensorSpec const&)> const& visit) {
  for (LinearSpec const* linear : {&mlp.gate, &mlp.up, &mlp.down}) {
    visit(linear->weight);
    if (linear->scale) {
      visit(*linear->scale);
    }
  }
}

namespace {

void visit_group(TensorGroup const& group, std::function<void(TensorSpec const&)> const& visit) {
  for (auto const& [slot, linear] : group.linears) {
    visit(linear.weight);
    if (linear.scale) {
      visit(*linear.scale);
    }
  }
  for (auto const& [slot, tensor] : group.tensors) {
    visit(tensor);
  }
}

}  // namespace

void for_each_replicated(BlockSpec const& block,
                         std::function<void(TensorSpec const&)> const& visit) {
  for (auto const& [slot, tensor] : block.norms) {
    visit(tensor);
  }
  visit_group(block.attention, visit);
  visit_group(block.extra, visit);
  if (block.dense_mlp) {
    for_each_tensor(*block.dense_mlp, visit);
  }
  if (block.moe) {
    RouterSpec const& router = block.moe->router;
    visit(router.weight);
    for (auto const* optional : {&router.bias, &router.bias_vl, &router.tid2eid}) {
      if (*optional) {
        visit(**optional);
      }
    }
    if (block.moe->shared) {
      for_each_tensor(*block.moe->shared, visit);
    }
  }
}

void for_each_tensor(ModelSpec const& spec, bool const with_mtp,
                     std::function<void(TensorSpec const&)> const& visit) {
  visit(spec.embed);
  visit(spec.final_norm);
  visit(spec.lm_head);
  visit_group(spec.top_extra, visit);
  auto const visit_block = [&](BlockSpec const& block) {
    for_each_replicated(block, visit);
    if (block.moe) {
      for (SwigluSpec const& expert : block.moe->experts) {
        for_each_tensor(expert, visit);
      }
    }
  };
  for (BlockSpec const& block : spec.layers) {
    visit_block(block);
  }
  if (with_mtp) {
    for (BlockSpec const& block : spec.mtp) {
      visit_block(block);
    }
  }
}

std::string describe(TensorSpec const& tensor) {
  return fmt::format("{} {}", checkpoint::dtype_name(tensor.dtype),
                     checkpoint::shape_string(tensor.shape));
}

}  // namespace gcmoe::model
