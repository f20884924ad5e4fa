#include "engine/tiny/tensor_plan.h"

#include <utility>

#include "engine/common/check.h"
#include "engine/formats/mxfp4.h"

namespace gcmoe::tiny {

std::vector<StoredTensor> stored_tensors(PlannedTensor const& tensor) {
  using checkpoint::DType;
  auto const matrix = [&] { return formats::MatrixDims{tensor.shape.at(0), tensor.shape.at(1)}; };
  auto const shape_of = [](formats::MatrixDims const dims) {
    return std::vector<std::int64_t>{dims.rows, dims.cols};
  };
  switch (tensor.storage) {
    case Storage::kBf16:
      return {{tensor.name, DType::kBf16, tensor.shape}};
    case Storage::kF32:
      return {{tensor.name, DType::kF32, tensor.shape}};
    case Storage::kI64:
      return {{tensor.name, DType::kI64, tensor.shape}};
    case Storage::kFp8E8m0:
      return {{tensor.name, DType::kF8E4M3, tensor.shape},
              {tensor.scale_name, DType::kF8E8M0,
               shape_of(formats::scale_dims(matrix(), tensor.block))}};
    case Storage::kFp8F32:
      return {
          {tensor.name, DType::kF8E4M3, tensor.shape},
          {tensor.scale_name, DType::kF32, shape_of(formats::scale_dims(matrix(), tensor.block))}};
    case Storage::kMxfp4:
      return {{tensor.name, DType::kI8, shape_of(formats::mxfp4_packed_dims(matrix()))},
              {tensor.scale_name, DType::kF8E8M0, shape_of(formats::mxfp4_scale_dims(matrix()))}};
  }
  return {};
}

Status TensorPlan::add_linear(std::string const& prefix, std::int64_t const out,
                              std::int64_t const in, config::WeightFormat const& format) {
  GCMOE_CHECK_ARG(out > 0 && in > 0, "{}: linear shape [{}, {}] must be positive", prefix, out, in);
  PlannedTensor tensor{prefix + ".weight",
                       "",
                       Storage::kBf16,
                       {out, in},
                       {format.block_rows, format.block_cols},
                       normal_init(0.0, kWeightStd)};
  std::string const scale_suffix =
      naming_ == ScaleNaming::kWeightScaleInv ? ".weight_scale_inv" : ".scale";
  switch (format.encoding) {
    case config::WeightEncoding::kBf16:
      GCMOE_CHECK_ARG(format.scale == config::ScaleKind::kNone, "{}: BF16 weights have no scale",
                      prefix);
      break;
    case config::WeightEncoding::kFp8E4m3:
      GCMOE_CHECK_ARG(format.scale != config::ScaleKind::kNone && format.block_rows > 0 &&
                          format.block_cols > 0,
                      "{}: FP8 weights need block scales", prefix);
      tensor.storage =
          format.scale == config::ScaleKind::kE8m0 ? Storage::kFp8E8m0 : Storage::kFp8F32;
      tensor.scale_name = prefix + scale_suffix;
      break;
    case config::WeightEncoding::kMxfp4:
      GCMOE_CHECK_ARG(in % 32 == 0, "{}: MXFP4 K = {} is not a multiple of 32", prefix, in);
      tensor.storage = Storage::kMxfp4;
      tensor.scale_name = prefix + ".scale";
      break;
  }
  tensors_.push_back(std::move(tensor));
  return Status();
}

void TensorPlan::add_bf16(std::string name, std::vector<std::int64_t> shape, Init const init) {
  tensors_.push_back({std::move(name), "", Storage::kBf16, std::move(shape), {}, init});
}

void TensorPlan::add_f32(std::string name, std::vector<std::int64_t> shape, Init const init) {
  tensors_.push_back({std::move(name), "", Storage::kF32, std::move(shape), {}, init});
}

void TensorPlan::add_expert_table(std::string name, std::int64_t const rows, std::int64_t const k,
                                  std::int64_t const experts) {
  tensors_.push_back({std::move(name),
                      "",
                      Storage::kI64,
                      {rows, k},
                      {},
                      {InitKind::kExpertTable, static_cast<double>(experts), 0.0}});
}

}  // namespace gcmoe::tiny
