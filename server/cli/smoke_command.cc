// `gcmoe smoke`: the end-to-end run of what exists today, used by README command one until the
// server serves the embedded model. It reports the build, makes and loads the embedded default
// model (embedded_model_check.h), runs the first kernel against its CPU reference on random data,
// and (with a GPU) proves the comm/compute split.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <vector>

#include "engine/common/check.h"
#include "engine/common/version.h"
#include "kernels/elementwise/axpby_ref.h"
#include "server/cli/command.h"
#include "server/cli/embedded_model_check.h"

#if GCMOE_HAVE_CUDA
#include "engine/backends/cuda/device_buffer.h"
#include "engine/backends/cuda/device_info.h"
#include "engine/backends/cuda/partition_probe.h"
#include "kernels/elementwise/axpby.h"
#endif

namespace gcmoe::cli {
namespace {

struct SmokeOptions {
  std::size_t elements = 1 << 22;
  int comm_sms = 16;
  std::uint64_t seed = 1;
  EmbeddedModelCheck model;
};

std::vector<float> random_vector(std::size_t n, std::mt19937_64& rng) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) {
    x = dist(rng);
  }
  return v;
}

#if GCMOE_HAVE_CUDA
StatusOr<double> gpu_axpby_error(std::vector<float> const& x, std::vector<float> const& y,
                                 std::vector<float> const& ref) {
  GCMOE_ASSIGN_OR_RETURN(auto dx, cuda::DeviceBuffer<float>::allocate(x.size()));
  GCMOE_ASSIGN_OR_RETURN(auto dy, cuda::DeviceBuffer<float>::allocate(y.size()));
  GCMOE_RETURN_IF_ERROR(dx.copy_from_host(x));
  GCMOE_RETURN_IF_ERROR(dy.copy_from_host(y));
  GCMOE_RETURN_IF_ERROR(kernels::axpby(1.5f, dx.data(), -0.25f, dy.data(),
                                       static_cast<std::int64_t>(x.size()), nullptr));
  GCMOE_CHECK_CUDA(cudaDeviceSynchronize());
  std::vector<float> out(y.size());
  GCMOE_RETURN_IF_ERROR(dy.copy_to_host(out));
  double diff = 0.0;
  double norm = 0.0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    diff += (static_cast<double>(out[i]) - ref[i]) * (static_cast<double>(out[i]) - ref[i]);
    norm += static_cast<double>(ref[i]) * ref[i];
  }
  return std::sqrt(diff / norm);
}
#endif

// With a GPU: the first kernel against its reference and the comm/compute green-context split.
Status smoke_cuda([[maybe_unused]] SmokeOptions const& options,
                  [[maybe_unused]] std::vector<float> const& x,
                  [[maybe_unused]] std::vector<float> const& y,
                  [[maybe_unused]] std::vector<float> const& ref) {
#if GCMOE_HAVE_CUDA
  if (cuda::visible_device_count() == 0) {
    fmt::print("cuda: built with CUDA, no device visible; CPU backend only\n");
    return Status();
  }
  GCMOE_ASSIGN_OR_RETURN(auto const info, cuda::query_device(0));
  fmt::print("{}\n", cuda::describe(info));
  GCMOE_ASSIGN_OR_RETURN(double const error, gpu_axpby_error(x, y, ref));
  fmt::print("cuda: axpby vs CPU reference rel_l2_error {:.3e}\n", error);
  GCMOE_CHECK_INTERNAL(error < 1e-6, "axpby error {:.3e} above 1e-6", error);
  GCMOE_ASSIGN_OR_RETURN(auto const probe, cuda::probe_partition(0, options.comm_sms));
  fmt::print("cuda: green contexts comm {} SMs + compute {} SMs of {}, concurrent {}: {}\n",
             probe.comm_sms, probe.compute_sms, probe.device_sms,
             probe.ran_concurrently ? "yes" : "NO", probe.verdict.to_string());
  GCMOE_RETURN_IF_ERROR(probe.verdict);
  GCMOE_CHECK_INTERNAL(probe.ran_concurrently, "the two partitions did not run concurrently");
#else
  fmt::print("cuda: not built (CPU backend only)\n");
#endif
  return Status();
}

Status run_smoke(SmokeOptions const& options) {
  fmt::print("gcmoe {}\n", version_string());
  std::mt19937_64 rng(options.seed);
  std::vector<float> const x = random_vector(options.elements, rng);
  std::vector<float> const y = random_vector(options.elements, rng);
  std::vector<float> ref = y;
  kernels::axpby_ref(1.5f, x, -0.25f, ref);
  fmt::print("cpu: axpby reference over {} random floats done\n", options.elements);
  GCMOE_RETURN_IF_ERROR(check_embedded_model(options.model));

  GCMOE_RETURN_IF_ERROR(smoke_cuda(options, x, y, ref));
  fmt::print("smoke: OK\n");
  return Status();
}

}  // namespace

CommandRunner add_smoke_command(CLI::App& app) {
  auto options = std::make_shared<SmokeOptions>();
  CLI::App* sub =
      app.add_subcommand("smoke", "Run what exists end to end (kernels vs CPU references)");
  sub->add_option("--elements", options->elements, "Random floats for the axpby check")
      ->capture_default_str();
  sub->add_option("--comm-sms", options->comm_sms, "SMs asked for the comm partition")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  sub->add_option("--seed", options->seed, "Random seed")->capture_default_str();
  if (char const* cache = std::getenv("GCMOE_CACHE_DIR"); cache != nullptr) {
    options->model.cache_dir = std::filesystem::path(cache) / "tiny-glm-5.2";
  }
  sub->add_option("--model-config", options->model.config,
                  "config.json of the embedded default model (weights made on first use)")
      ->capture_default_str();
  sub->add_option("--cache-dir", options->model.cache_dir,
                  "Where the embedded default's weights are written once and reused "
                  "(default .cache/gcmoe/tiny-glm-5.2, or $GCMOE_CACHE_DIR/tiny-glm-5.2)")
      ->capture_default_str();
  return [options] { return run_smoke(*options); };
}

}  // namespace gcmoe::cli
