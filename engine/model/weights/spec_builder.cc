#include "engine/model/weights/spec_builder.h"

#include <utility>

#include "engine/common/check.h"

namespace gcmoe::model {

BlockBuilder::BlockBuilder(std::string prefix, std::int64_t const index, ScaleNaming const naming)
    : naming_(naming) {
  block_.prefix = std::move(prefix);
  block_.index = index;
}

Status BlockBuilder::linear(TensorGroup& group, std::string const& slot, std::int64_t const out,
                            std::int64_t const in, config::WeightFormat const& format) {
  GCMOE_ASSIGN_OR_RETURN(LinearSpec spec,
                         linear_spec(block_.prefix + slot, out, in, format, naming_));
  group.linears.insert_or_assign(slot, std::move(spec));
  return Status();
}

TensorSpec BlockBuilder::plain(std::string const& slot, checkpoint::DType const dtype,
                               std::vector<std::int64_t> shape) const {
  return TensorSpec{block_.prefix + slot, dtype, std::move(shape)};
}

void BlockBuilder::tensor(TensorGroup& group, std::string const& slot,
                          checkpoint::DType const dtype, std::vector<std::int64_t> shape) {
  group.tensors.insert_or_assign(slot, plain(slot, dtype, std::move(shape)));
}

void BlockBuilder::norm(std::string const& slot, std::int64_t const width) {
  block_.norms.insert_or_assign(slot, plain(slot, checkpoint::DType::kBf16, {width}));
}

StatusOr<SwigluSpec> BlockBuilder::swiglu(std::string const& mlp, char const* gate, char const* up,
                                          char const* down, std::int64_t const hidden,
                                          std::int64_t const inter,
                                          config::WeightFormat const& format) const {
  std::string const p = block_.prefix + mlp;
  GCMOE_ASSIGN_OR_RETURN(LinearSpec gate_spec,
                         linear_spec(p + gate, inter, hidden, format, naming_));
  GCMOE_ASSIGN_OR_RETURN(LinearSpec up_spec, linear_spec(p + up, inter, hidden, format, naming_));
  GCMOE_ASSIGN_OR_RETURN(LinearSpec down_spec,
                         linear_spec(p + down, hidden, inter, format, naming_));
  return SwigluSpec{std::move(gate_spec), std::move(up_spec), std::move(down_spec)};
}

}  // namespace gcmoe::model
