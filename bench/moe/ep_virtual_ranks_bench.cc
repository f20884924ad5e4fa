// bench_ep_virtual_ranks: expert parallelism through the GC-MoE protocol with N VIRTUAL ranks in
// one process on ONE GPU (kernels/moe/ep_virtual_group.h), GLM-5.2 shape (H 6144, I 2048, 256
// experts, top-8, shared expert): each rank holds 256/N experts and brings T tokens. All ranks
// share the one GPU, so this measures what the protocol (count exchange, row layout, cross-rank
// dispatch, done flags, pull combine, N·(route + plan) launches) costs against the single-rank
// layer on the same N·T tokens — not multi-GPU speed, which needs N GPUs. Both are timed in the
// same run as graph replays (the group alternates its two parity graphs), each beside the HBM floor
// of the bytes the step must read, and the outputs are compared (bit equality and rel-L2). The
// group is timed again with every rank's L2 acquiring its L1's rows (down_by_rows; single
// timings, not pairs), whose output must equal the group's bit for bit.
//
// Usage: bench_ep_virtual_ranks [--out FILE] [--reps 20] [--commit SHA] [--ranks 2,4,8]
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "bench/common/bench_exit.h"
#include "bench/common/device_fill.h"
#include "bench/common/gpu_timing.h"
#include "bench/common/moe_layer_weights.h"
#include "engine/backends/cuda/device_buffer.h"
#include "engine/backends/cuda/graph.h"
#include "engine/common/cuda_check.h"
#include "kernels/moe/ep_virtual_group.h"

namespace gcmoe::bench {
namespace {

using cuda::DeviceBuffer;

constexpr int kMaxTokens = 256;  // all ranks together (the single-rank layer's bucket)

struct Options {
  std::string out = "ep_virtual_ranks.json";
  int reps = 20;
  std::string commit = "unknown";
  std::vector<int> ranks = {2, 4, 8};
};

StatusOr<std::vector<float>> read_back(float const* device, std::size_t count) {
  std::vector<float> host(count);
  GCMOE_CHECK_CUDA(cudaMemcpy(host.data(), device, count * 4, cudaMemcpyDeviceToHost));
  return host;
}

Status run(Options const& options) {
  ModelShape const& m = kGlm52;
  cudaStream_t stream = nullptr;
  GCMOE_CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  GCMOE_ASSIGN_OR_RETURN(MemoryCeilings const ceilings, measure_memory_ceilings(stream));
  double const ceiling_gbps = ceilings.best();
  kernels::PackedExpertSections const s = sections(m);
  std::int64_t const stride = s.stride;
  GCMOE_ASSIGN_OR_RETURN(auto experts,
                         DeviceBuffer<std::uint8_t>::allocate((m.experts + 1) * stride));
  GCMOE_ASSIGN_OR_RETURN(auto gate, DeviceBuffer<float>::allocate(m.experts * m.hidden));
  GCMOE_ASSIGN_OR_RETURN(auto bias, DeviceBuffer<float>::allocate(m.experts));
  GCMOE_ASSIGN_OR_RETURN(auto x, DeviceBuffer<float>::allocate(kMaxTokens * m.hidden));
  GCMOE_ASSIGN_OR_RETURN(auto out_single, DeviceBuffer<float>::allocate(kMaxTokens * m.hidden));
  GCMOE_ASSIGN_OR_RETURN(auto out_ep, DeviceBuffer<float>::allocate(kMaxTokens * m.hidden));
  GCMOE_ASSIGN_OR_RETURN(auto out_rows, DeviceBuffer<float>::allocate(kMaxTokens * m.hidden));
  GCMOE_RETURN_IF_ERROR(fill_experts(experts.data(), m.experts + 1, s, 11, stream));
  GCMOE_RETURN_IF_ERROR(
      fill_random_floats(gate.data(), m.experts * m.hidden, -0.02f, 0.02f, 7, stream));
  GCMOE_RETURN_IF_ERROR(fill_random_floats(bias.data(), m.experts, -0.01f, 0.01f, 8, stream));
  GCMOE_RETURN_IF_ERROR(
      fill_random_floats(x.data(), kMaxTokens * m.hidden, -2.0f, 2.0f, 9, stream));
  GCMOE_CHECK_CUDA(cudaStreamSynchronize(stream));
  kernels::MoeLayerConfig const config = kernels::moe_layer_config(
      m.family, m.hidden, m.inter, m.experts, m.top_k, /*fp8_activations=*/true);
  kernels::MoeLayerDeviceWeights const all{.gate_weight = gate.data(),
                                           .bias = bias.data(),
                                           .experts = experts.data(),
                                           .sections = s,
                                           .has_shared = true};
  GCMOE_ASSIGN_OR_RETURN(auto single, kernels::MoeLayerSequential::create(config, kMaxTokens));
  double const router_bytes = 4.0 * m.experts * m.hidden;
  fmt::print("ceiling (best read stream) {:.0f} GB/s; GLM-5.2 shape; virtual ranks share ONE GPU\n",
             ceiling_gbps);
  fmt::print("{:>5} {:>7} {:>8} {:>9} {:>11} {:>11} {:>9} {:>6} {:>9} {:>11} {:>9}\n", "ranks",
             "T/rank", "experts", "floor_us", "single_us", "ep_group_us", "ep/single", "equal",
             "rel_l2", "ep_rows_us", "pdl/rows");
  nlohmann::json points = nlohmann::json::array();
  for (int const ranks : options.ranks) {
    int const local = m.experts / ranks;
    // Rank r's experts: its 256/N routed ones, then the shared one.
    std::vector<DeviceBuffer<std::uint8_t>> rank_experts;
    std::vector<kernels::MoeLayerDeviceWeights> weights;
    for (int r = 0; r < ranks; ++r) {
      GCMOE_ASSIGN_OR_RETURN(auto buffer,
                             DeviceBuffer<std::uint8_t>::allocate((local + 1) * stride));
      GCMOE_CHECK_CUDA(cudaMemcpy(buffer.data(), experts.data() + r * local * stride,
                                  local * stride, cudaMemcpyDeviceToDevice));
      GCMOE_CHECK_CUDA(cudaMemcpy(buffer.data() + local * stride,
                                  experts.data() + m.experts * stride, stride,
                                  cudaMemcpyDeviceToDevice));
      kernels::MoeLayerDeviceWeights w = all;
      w.experts = buffer.data();
      w.shared_index = local;
      weights.push_back(w);
      rank_experts.push_back(std::move(buffer));
    }
    for (int const per_rank : {1, 4, 16, 32}) {
      int const tokens = ranks * per_rank;
      if (tokens > kMaxTokens) {
        continue;
      }
      GCMOE_ASSIGN_OR_RETURN(auto group,
                             kernels::EpVirtualGroup::create(config, per_rank, weights, 0, 16));
      std::vector<float const*> xs;
      std::vector<float*> outs;
      std::vector<int> counts(static_cast<std::size_t>(ranks), per_rank);
      for (int r = 0; r < ranks; ++r) {
        xs.push_back(x.data() + std::int64_t{r} * per_rank * m.hidden);
        outs.push_back(out_ep.data() + std::int64_t{r} * per_rank * m.hidden);
      }
      GCMOE_RETURN_IF_ERROR(group.capture(xs, counts, outs));
      GCMOE_ASSIGN_OR_RETURN(
          double const ep_us,
          time_launches(group.stream(), options.reps, [&]() -> Status { return group.replay(); }));
      GCMOE_RETURN_IF_ERROR(group.synchronize());
      // The same group with every rank's L2 acquiring its L1's rows (EpMoeRank::set_down_by_rows)
      // instead of waiting for L1's grid; its output must equal the group's above bit for bit.
      GCMOE_ASSIGN_OR_RETURN(auto rows_group,
                             kernels::EpVirtualGroup::create(config, per_rank, weights, 0, 16));
      std::vector<float*> rows_outs;
      for (int r = 0; r < ranks; ++r) {
        rows_group.rank(r).set_down_by_rows(true);
        rows_outs.push_back(out_rows.data() + std::int64_t{r} * per_rank * m.hidden);
      }
      GCMOE_RETURN_IF_ERROR(rows_group.capture(xs, counts, rows_outs));
      GCMOE_ASSIGN_OR_RETURN(double const rows_us,
                             time_launches(rows_group.stream(), options.reps,
                                           [&]() -> Status { return rows_group.replay(); }));
      GCMOE_RETURN_IF_ERROR(rows_group.synchronize());
      // The single-rank layer on the same N·T tokens (shared expert in its own launch, as EP).
      GCMOE_ASSIGN_OR_RETURN(cuda::Graph const graph,
                             cuda::Graph::capture(stream, [&](cudaStream_t st) {
                               return single.run(all, x.data(), tokens, out_single.data(), st,
                                                 kernels::SharedExpertLaunch::kSeparate);
                             }));
      GCMOE_ASSIGN_OR_RETURN(
          double const single_us,
          time_launches(stream, options.reps, [&]() -> Status { return graph.launch(stream); }));
      GCMOE_CHECK_CUDA(cudaStreamSynchronize(stream));
      std::size_t const values = static_cast<std::size_t>(tokens) * m.hidden;
      GCMOE_ASSIGN_OR_RETURN(auto const a, read_back(out_ep.data(), values));
      GCMOE_ASSIGN_OR_RETURN(auto const b, read_back(out_single.data(), values));
      bool const equal = std::memcmp(a.data(), b.data(), values * 4) == 0;
      GCMOE_ASSIGN_OR_RETURN(auto const by_rows, read_back(out_rows.data(), values));
      if (std::memcmp(a.data(), by_rows.data(), values * 4) != 0) {
        return Status(StatusCode::kInternal, "EP output with L2 by rows differs from L2 by PDL");
      }
      double diff = 0.0;
      double norm = 0.0;
      for (std::size_t i = 0; i < values; ++i) {
        diff += (static_cast<double>(a[i]) - b[i]) * (static_cast<double>(a[i]) - b[i]);
        norm += static_cast<double>(b[i]) * b[i];
      }
      double const rel_l2 = norm > 0.0 ? std::sqrt(diff / norm) : std::sqrt(diff);
      std::vector<std::int32_t> ids(static_cast<std::size_t>(tokens) * m.top_k);
      GCMOE_CHECK_CUDA(
          cudaMemcpy(ids.data(), single.topk_ids(), ids.size() * 4, cudaMemcpyDeviceToHost));
      std::size_t const touched = std::set<int>(ids.begin(), ids.end()).size();
      double const bytes = (static_cast<double>(touched) + 1.0) * stride + router_bytes;
      double const floor_us = bytes / (ceiling_gbps * 1e9) * 1e6;
      fmt::print(
          "{:>5} {:>7} {:>8} {:>9.1f} {:>11.1f} {:>11.1f} {:>8.2f}x {:>6} {:>9.2e} {:>11.1f} "
          "{:>8.3f}x\n",
          ranks, per_rank, touched, floor_us, single_us, ep_us, ep_us / single_us,
          equal ? "yes" : "no", rel_l2, rows_us, ep_us / rows_us);
      points.push_back({{"ranks", ranks},
                        {"tokens_per_rank", per_rank},
                        {"touched_experts", touched},
                        {"floor_us", floor_us},
                        {"single_rank_same_tokens_us", single_us},
                        {"ep_virtual_group_us", ep_us},
                        {"ep_over_single", ep_us / single_us},
                        {"ep_virtual_group_by_rows_us", rows_us},
                        {"ep_by_rows_speedup", ep_us / rows_us},
                        {"outputs_bit_equal", equal},
                        {"rel_l2_vs_single_rank", rel_l2}});
      // Bit equality holds while both sides route with the same router kernel; the single-rank
      // layer routes N·T tokens, past 16 of them with the tiled kernel (another fp32 summation
      // order), so its weights may differ in the last bits. A wrong row or rank is of order 1.
      if (rel_l2 > 1e-2) {
        return Status(StatusCode::kInternal, "EP output differs from the single-rank layer");
      }
    }
  }
  cudaDeviceProp prop{};
  GCMOE_CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  nlohmann::json const doc = {
      {"benchmark", "ep_virtual_ranks"},
      {"label",
       "VIRTUAL ranks: N expert-parallel ranks in one process sharing ONE GPU; the step of all N "
       "ranks vs the single-rank layer on the same N*T tokens; not multi-GPU speed"},
      {"model_shape", "glm5.2"},
      {"device", prop.name},
      {"commit", options.commit},
      {"ceiling_gbps", ceiling_gbps},
      {"comm_sms", 16},
      {"points", points}};
  std::ofstream(options.out) << doc.dump(2) << "\n";
  GCMOE_CHECK_CUDA(cudaStreamDestroy(stream));
  return Status();
}

}  // namespace
}  // namespace gcmoe::bench

int main(int argc, char** argv) {
  gcmoe::bench::Options options;
  CLI::App app{"bench_ep_virtual_ranks: expert parallelism with virtual ranks on one GPU"};
  app.add_option("--out", options.out, "JSON output file");
  app.add_option("--reps", options.reps, "timed repetitions per point")
      ->check(CLI::Range(1, 10000));
  app.add_option("--commit", options.commit, "commit the binary was built from");
  app.add_option("--ranks", options.ranks, "virtual rank counts (divide 256, at most 8)")
      ->delimiter(',');
  CLI11_PARSE(app, argc, argv);
  return gcmoe::bench::exit_code("bench_ep_virtual_ranks", gcmoe::bench::run(options));
}
