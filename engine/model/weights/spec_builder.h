#pragma once
// Small helpers the family mappings share to fill a BlockSpec: every name is the block prefix
// plus the slot, so a slot is spelled once.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "engine/common/status.h"
#include "engine/model/weights/weight_spec.h"

namespace gcmoe::model {

class BlockBuilder {
 public:
  BlockBuilder(std::string prefix, std::int64_t index, ScaleNaming naming);

  // `<prefix><slot>.weight` [out, in] in `format`, into `group`.
  Status linear(TensorGroup& group, std::string const& slot, std::int64_t out, std::int64_t in,
                config::WeightFormat const& format);
  // A plain tensor `<prefix><slot>`.
  void tensor(TensorGroup& group, std::string const& slot, checkpoint::DType dtype,
              std::vector<std::int64_t> shape);
  void norm(std::string const& slot, std::int64_t width);  // BF16 [width] into norms
  TensorSpec plain(std::string const& slot, checkpoint::DType dtype,
                   std::vector<std::int64_t> shape) const;

  // `<prefix><mlp><gate>`, `<up>`, `<down>`: gate/up [inter, hidden], down [hidden, inter].
  StatusOr<SwigluSpec> swiglu(std::string const& mlp, char const* gate, char const* up,
                              char const* down, std::int64_t hidden, std::int64_t inter,
                              config::WeightFormat const& format) const;

  BlockSpec& block() { return block_; }
  std::string const& prefix() const { return block_.prefix; }
  BlockSpec take() { return std::move(block_); }

 private:
  BlockSpec block_;
  ScaleNaming naming_;
};

}  // namespace gcmoe::model
