#include "bench/moe/moe_layer_rig.h"

#include <tuple>
#include <utility>

#include "bench/common/device_fill.h"
#include "engine/common/check.h"
#include "engine/common/cuda_check.h"

namespace gcmoe::bench {
namespace {

using cuda::DeviceBuffer;

Status fill_buffers(LayerRig& rig, cudaStream_t stream) {
  ModelShape const& m = rig.model;
  if (rig.apart) {
    GCMOE_RETURN_IF_ERROR(fill_mxfp4_experts(rig.experts.data(), m.experts, rig.sections, m.hidden,
                                             m.inter, 11, stream));
    GCMOE_RETURN_IF_ERROR(
        fill_experts(rig.shared_expert.data(), 1, rig.shared_sections, 12, stream));
  } else {
    GCMOE_RETURN_IF_ERROR(
        fill_experts(rig.experts.data(), m.experts + 1, rig.sections, 11, stream));
  }
  GCMOE_RETURN_IF_ERROR(
      fill_random_floats(rig.gate.data(), m.experts * m.hidden, -0.02f, 0.02f, 7, stream));
  GCMOE_RETURN_IF_ERROR(fill_random_floats(rig.bias.data(), m.experts, -0.01f, 0.01f, 8, stream));
  GCMOE_RETURN_IF_ERROR(
      fill_random_floats(rig.x.data(), kLayerBenchMaxTokens * m.hidden, -2.0f, 2.0f, 9, stream));
  GCMOE_CHECK_CUDA(cudaStreamSynchronize(stream));
  return Status();
}

StatusOr<std::unique_ptr<kernels::GcMoeLayer>> make_layer(kernels::MoeLayerConfig const& config,
                                                          kernels::GcMoeOptions const& options) {
  GCMOE_ASSIGN_OR_RETURN(auto layer,
                         kernels::GcMoeLayer::create(config, kLayerBenchMaxTokens, 0, options));
  return std::make_unique<kernels::GcMoeLayer>(std::move(layer));
}

// One operator per comm partition size (each its own pair of green contexts), the overlapped
// body, and the asked ablations.
Status create_layers(LayerRig& rig, LayerRigOptions const& options) {
  // Ablations at the first comm size: without the L1→L2 overlap, and with each dispatch on its
  // GEMM's stream (no comm partition concurrency).
  if (options.ablations) {
    for (auto const& [name, gc_options] :
         {std::pair{std::string("no_pdl"),
                    kernels::GcMoeOptions{
                        .comm_sms = options.comm_sms[0], .overlap_down = false, .chain = false}},
          std::pair{
              std::string("dispatch_in_stream"),
              kernels::GcMoeOptions{.comm_sms = options.comm_sms[0], .dispatch_on_comm = false}}}) {
      GCMOE_ASSIGN_OR_RETURN(auto layer, make_layer(rig.config, gc_options));
      rig.ablations.push_back({name, std::move(layer)});
    }
  }
  for (int const asked : options.comm_sms) {
    GCMOE_ASSIGN_OR_RETURN(auto layer, make_layer(rig.config, {.comm_sms = asked}));
    rig.comm_sms.push_back(layer->comm_sms(1));
    rig.layers.push_back(std::move(layer));
  }
  // The plan's candidate where no split pays, timed in pairs with the sequential graph, with L2 by
  // PDL and plainly (the launch chains on in both).
  GCMOE_ASSIGN_OR_RETURN(auto const overlapped_plan,
                         kernels::GcPartitionPlan::create({{.max_tokens = 1, .overlapped = true}}));
  GCMOE_ASSIGN_OR_RETURN(rig.overlapped, make_layer(rig.config, {.plan = overlapped_plan}));
  GCMOE_ASSIGN_OR_RETURN(rig.overlapped_plain,
                         make_layer(rig.config, {.plan = overlapped_plan, .overlap_down = false}));
  // Ablations of the overlapped body: without the launch chains (GcMoeOptions::chain).
  if (options.overlapped_variants) {
    for (auto const& [name, chain, down] : {std::tuple{std::string("l2_pdl_only"), false, true},
                                            std::tuple{std::string("no_pdl"), false, false}}) {
      GCMOE_ASSIGN_OR_RETURN(
          auto layer,
          make_layer(rig.config, {.plan = overlapped_plan, .overlap_down = down, .chain = chain}));
      rig.overlapped_variants.push_back({name, std::move(layer)});
    }
  }
  return Status();
}

}  // namespace

kernels::MoeLayerDeviceWeights LayerRig::weights(bool with_shared_expert) const {
  return {.gate_weight = gate.data(),
          .bias = bias.data(),
          .experts = experts.data(),
          .sections = sections,
          .has_shared = with_shared_expert,
          .format = model.format,
          .shared_expert = apart ? shared_expert.data() : nullptr,
          .shared_sections = apart ? shared_sections : kernels::PackedExpertSections{}};
}

StatusOr<std::unique_ptr<LayerRig>> make_layer_rig(ModelShape const& m,
                                                   LayerRigOptions const& options,
                                                   cudaStream_t stream) {
  GCMOE_CHECK_ARG(!options.comm_sms.empty(), "at least one comm partition size is needed");
  bool const apart = m.format == kernels::ExpertWeightFormat::kMxfp4;
  kernels::PackedExpertSections const s = sections(m);
  kernels::PackedExpertSections const shared_s = kernels::fp8_expert_sections(m.hidden, m.inter);
  // The routed experts, then the shared expert as expert m.experts — or, with MXFP4 routed
  // experts, the FP8 shared expert in a buffer of its own.
  GCMOE_ASSIGN_OR_RETURN(
      auto experts, DeviceBuffer<std::uint8_t>::allocate((m.experts + (apart ? 0 : 1)) * s.stride));
  GCMOE_ASSIGN_OR_RETURN(auto shared_expert,
                         DeviceBuffer<std::uint8_t>::allocate(apart ? shared_s.stride : 1));
  GCMOE_ASSIGN_OR_RETURN(auto gate, DeviceBuffer<float>::allocate(m.experts * m.hidden));
  GCMOE_ASSIGN_OR_RETURN(auto bias, DeviceBuffer<float>::allocate(m.experts));
  GCMOE_ASSIGN_OR_RETURN(auto x, DeviceBuffer<float>::allocate(kLayerBenchMaxTokens * m.hidden));
  GCMOE_ASSIGN_OR_RETURN(auto out, DeviceBuffer<float>::allocate(kLayerBenchMaxTokens * m.hidden));
  auto rig = std::make_unique<LayerRig>();
  rig->model = m;
  rig->config = kernels::moe_layer_config(m.family, m.hidden, m.inter, m.experts, m.top_k,
                                          /*fp8_activations=*/true);
  rig->sections = s;
  rig->shared_sections = shared_s;
  rig->apart = apart;
  rig->experts = std::move(experts);
  rig->shared_expert = std::move(shared_expert);
  rig->gate = std::move(gate);
  rig->bias = std::move(bias);
  rig->x = std::move(x);
  rig->out = std::move(out);
  GCMOE_RETURN_IF_ERROR(fill_buffers(*rig, stream));
  GCMOE_RETURN_IF_ERROR(create_layers(*rig, options));
  return rig;
}

}  // namespace gcmoe::bench
