#pragma once
// What bench_moe_layer times for one model: the layer's device buffers (random weights at the
// model's shape in its release's formats, the router, inputs and outputs) and the GC-MoE
// operators it compares — one per comm partition size of the sweep, the overlapped body without a
// partition (L2 by PDL and plainly), and the optional ablations.

#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bench/common/moe_layer_weights.h"
#include "engine/backends/cuda/device_buffer.h"
#include "engine/common/status.h"
#include "kernels/moe/gc_moe_layer.h"
#include "kernels/moe/packed_expert_sections.h"

namespace gcmoe::bench {

// Tokens per rank the operators are created for: the sweep's largest T.
inline constexpr int kLayerBenchMaxTokens = 256;

struct LayerRigOptions {
  std::vector<int> comm_sms;  // asked comm partition sizes (SMs), at least one
  // Also, at the first comm size, GC-MoE without PDL and chains, and with each dispatch on its
  // GEMM's stream.
  bool ablations = false;
  // Also the overlapped body with the launch chains off, with and without L2 by PDL.
  bool overlapped_variants = false;
};

struct NamedLayer {
  std::string name;
  std::unique_ptr<kernels::GcMoeLayer> layer;
};

struct LayerRig {
  ModelShape model{};
  kernels::MoeLayerConfig config;
  kernels::PackedExpertSections sections;         // one routed expert
  kernels::PackedExpertSections shared_sections;  // the FP8 shared expert when packed apart
  // MXFP4 routed experts: the FP8 shared expert in a buffer of its own (else expert `experts`).
  bool apart = false;
  cuda::DeviceBuffer<std::uint8_t> experts;
  cuda::DeviceBuffer<std::uint8_t> shared_expert;
  cuda::DeviceBuffer<float> gate;  // [experts, hidden] fp32 router
  cuda::DeviceBuffer<float> bias;  // [experts]
  cuda::DeviceBuffer<float> x;     // [kLayerBenchMaxTokens, hidden]
  cuda::DeviceBuffer<float> out;   // [kLayerBenchMaxTokens, hidden]
  // One operator per comm size; layers.front() also runs the sequential baseline.
  std::vector<std::unique_ptr<kernels::GcMoeLayer>> layers;
  std::vector<int> comm_sms;  // as the driver granted them, per entry of `layers`
  std::vector<NamedLayer> ablations;
  // The GC-MoE body without a partition at every bucket (GcPartitionStep::overlapped).
  std::unique_ptr<kernels::GcMoeLayer> overlapped;
  std::unique_ptr<kernels::GcMoeLayer> overlapped_plain;  // L2 after L1
  std::vector<NamedLayer> overlapped_variants;

  kernels::MoeLayerDeviceWeights weights(bool with_shared_expert) const;
  double expert_bytes() const { return static_cast<double>(sections.stride); }
  double shared_bytes() const {
    return static_cast<double>(apart ? shared_sections.stride : sections.stride);
  }
  double router_bytes() const { return 4.0 * model.experts * model.hidden; }
};

// Allocates and fills the buffers (returns with the data in place) and creates the operators.
StatusOr<std::unique_ptr<LayerRig>> make_layer_rig(ModelShape const& m,
                                                   LayerRigOptions const& options,
                                                   cudaStream_t stream);

}  // namespace gcmoe::bench
