#pragma once
// The list of tensors a tiny checkpoint holds, before any value is drawn: official names, how each
// is stored (dtype, quantization, scale sibling) and the distribution its fp32 values come from.
// The family planners (glm_moe_dsa_plan.h, deepseek_plan.h) fill it from a parsed config.

#include <cstdint>
#include <string>
#include <vector>

#include "engine/checkpoint/dtype.h"
#include "engine/common/status.h"
#include "engine/config/model_config.h"
#include "engine/formats/matrix_dims.h"

namespace gcmoe::tiny {

enum class InitKind {
  kNormal,       // a = mean, b = standard deviation
  kUniform,      // [a, b)
  kExpertTable,  // I64 rows of distinct expert ids in [0, a) (V4 hash-routing `tid2eid`)
};

struct Init {
  InitKind kind = InitKind::kNormal;
  double a = 0.0;
  double b = 0.0;
};

constexpr Init normal_init(double const mean, double const stddev) {
  return {InitKind::kNormal, mean, stddev};
}
constexpr Init uniform_init(double const lo, double const hi) {
  return {InitKind::kUniform, lo, hi};
}

// Linear weights: the releases' initializer_range, and the std of trained projections.
inline constexpr double kWeightStd = 0.02;

enum class Storage {
  kBf16,
  kF32,
  kI64,
  kFp8E8m0,  // F8_E4M3 + F8_E8M0 block scales
  kFp8F32,   // F8_E4M3 + F32 block scales (multiply)
  kMxfp4,    // I8 [out, in / 2] + F8_E8M0 [out, in / 32]
};

// Where a quantized weight's scale lives: `<prefix>.scale` (DeepSeek, e8m0 or f32) or
// `<prefix>.weight_scale_inv` (GLM-5.2-FP8, f32).
enum class ScaleNaming { kDotScale, kWeightScaleInv };

struct PlannedTensor {
  std::string name;        // the data tensor
  std::string scale_name;  // its scale sibling; empty when unscaled
  Storage storage = Storage::kBf16;
  std::vector<std::int64_t> shape;  // logical shape: [out, in] before MXFP4 packing
  formats::BlockShape block;        // scale block of FP8 storages
  Init init;
};

// One tensor as the checkpoint stores it.
struct StoredTensor {
  std::string name;
  checkpoint::DType dtype = checkpoint::DType::kBf16;
  std::vector<std::int64_t> shape;
};

// The data tensor, then its scale sibling if any: FP8 weights are F8_E4M3 [out, in] with scales
// [ceil(out / B_r), ceil(in / B_c)] (F8_E8M0 or F32); MXFP4 weights are I8 [out, in / 2] with
// F8_E8M0 [out, in / 32].
std::vector<StoredTensor> stored_tensors(PlannedTensor const& tensor);

class TensorPlan {
 public:
  explicit TensorPlan(ScaleNaming naming) : naming_(naming) {}

  // `<prefix>.weight` [out, in] stored as `format` says (BF16, FP8 with its block scales, MXFP4),
  // with the scale sibling named per the family. Values ~ N(0, kWeightStd).
  Status add_linear(std::string const& prefix, std::int64_t out, std::int64_t in,
                    config::WeightFormat const& format);
  void add_bf16(std::string name, std::vector<std::int64_t> shape, Init init);
  void add_f32(std::string name, std::vector<std::int64_t> shape, Init init);
  // I64 [rows, k]: each row k distinct experts of `experts`.
  void add_expert_table(std::string name, std::int64_t rows, std::int64_t k, std::int64_t experts);

  std::vector<PlannedTensor> const& tensors() const { return tensors_; }

 private:
  ScaleNaming naming_;
  std::vector<PlannedTensor> tensors_;
};

}  // namespace gcmoe::tiny
