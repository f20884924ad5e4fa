#include "bench/moe/mxfp4_expert_ffn_data.h"

#include <algorithm>
#include <random>
#include <utility>
#include <vector>

#include "bench/common/device_fill.h"
#include "bench/common/expert_batch.h"
#include "bench/common/moe_layer_weights.h"
#include "engine/common/cuda_check.h"
#include "kernels/moe/expert_rows_hint.h"

namespace gcmoe::bench::mxfp4_ffn {
namespace {

using cuda::DeviceBuffer;

StatusOr<DeviceBuffer<std::uint32_t>> upload_repeated(std::vector<std::uint32_t> const& one) {
  GCMOE_ASSIGN_OR_RETURN(auto buffer, DeviceBuffer<std::uint32_t>::allocate(one.size() * kExperts));
  for (int e = 0; e < kExperts; ++e) {
    GCMOE_CHECK_CUDA(cudaMemcpy(buffer.data() + one.size() * e, one.data(),
                                one.size() * sizeof(std::uint32_t), cudaMemcpyHostToDevice));
  }
  return buffer;
}

}  // namespace

StatusOr<Weights> make_weights(cudaStream_t stream) {
  Weights w;
  GCMOE_ASSIGN_OR_RETURN(w.l1, DeviceBuffer<std::uint8_t>::allocate(kExperts * w.l1_stride()));
  GCMOE_ASSIGN_OR_RETURN(w.l2, DeviceBuffer<std::uint8_t>::allocate(kExperts * w.l2_stride()));
  // Random bytes are valid e2m1 code pairs.
  GCMOE_RETURN_IF_ERROR(
      fill_random_e4m3(w.l1.data(), static_cast<std::int64_t>(w.l1.size()), 1, stream));
  GCMOE_RETURN_IF_ERROR(
      fill_random_e4m3(w.l2.data(), static_cast<std::int64_t>(w.l2.size()), 2, stream));
  std::mt19937_64 rng(3);
  GCMOE_ASSIGN_OR_RETURN(w.l1_scales,
                         upload_repeated(mxfp4_scale_images(w.l1_tiles, w.l1_chunks, rng)));
  GCMOE_ASSIGN_OR_RETURN(w.l2_scales,
                         upload_repeated(mxfp4_scale_images(w.l2_tiles, w.l2_chunks, rng)));
  GCMOE_CHECK_CUDA(cudaStreamSynchronize(stream));
  return w;
}

StatusOr<Batch> make_batch(int global_tokens, int local, std::uint64_t seed, cudaStream_t stream) {
  GCMOE_ASSIGN_OR_RETURN(ExpertBatch routed, make_expert_batch({.global_tokens = global_tokens,
                                                                .local = local,
                                                                .experts = kExperts,
                                                                .top_k = kTopK,
                                                                .hidden = kHidden,
                                                                .inter = kInter},
                                                               seed, stream));
  Batch b{std::move(routed), 0, {}};
  b.rows_hint = kernels::routed_rows_hint(global_tokens, kTopK, kExperts);
  GCMOE_ASSIGN_OR_RETURN(
      b.route, DeviceBuffer<float>::allocate(static_cast<std::size_t>(std::max(b.rows, 1))));
  GCMOE_RETURN_IF_ERROR(fill_random_floats(
      b.route.data(), static_cast<std::int64_t>(b.route.size()), 0.05f, 1.0f, seed + 2, stream));
  return b;
}

}  // namespace gcmoe::bench::mxfp4_ffn
