// `gcmoe load-bench --dir DIR --out FILE.json`: writes a full-width synthetic layer stack of each
// model (release config cut to a few layers: layer_stack_config.h; random values in the release
// layout: synthetic_checkpoint.h) into DIR, then loads it as rank 0 of each --ranks count to the
// GPU (or host memory with --backend cpu): first with the files dropped from the page cache
// (disk-bound), then again from the cache (the copy path alone). Experts load through the
// family's kernel layout transform and, where there is one, also raw to show its cost. Writes
// JSON and prints a table; each stack is deleted after its runs unless --keep.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/common/check.h"
#include "engine/model/layer_stack_config.h"
#include "engine/model/load_progress.h"
#include "engine/model/synthetic_checkpoint.h"
#include "engine/model/weight_loader.h"
#include "engine/model/weights/model_weight_spec.h"
#include "server/cli/command.h"

#if GCMOE_HAVE_CUDA
#include "engine/backends/cuda/device_info.h"
#include "engine/model/cuda_weight_store.h"
#endif

namespace gcmoe::cli {
namespace {

struct LoadBenchOptions {
  std::string dir;
  std::string out;
  std::string configs = "configs/models";
  std::vector<std::string> models = {"glm-5.2", "deepseek-v4.1-flash"};
  std::int64_t glm_layers = 3;       // 1 dense + 2 MoE: ~23.7 GB
  std::int64_t deepseek_layers = 2;  // V4.1: 2 MoE, ~17.4 GB
  std::vector<std::int64_t> ranks = {1, 8};
  std::string backend = "auto";
  int device = 0;
  int workers = 0;
  std::int64_t staging_mib = 512;
  bool keep = false;
  bool skip_cold = false;
};

StatusOr<nlohmann::json> read_json(std::filesystem::path const& path) {
  std::ifstream in(path);
  if (!in) {
    return not_found_error(
        fmt::format("cannot open {} (run from the repository root or pass "
                    "--configs)",
                    path.string()));
  }
  nlohmann::json json = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  GCMOE_CHECK_ARG(!json.is_discarded(), "{} is not valid JSON", path.string());
  return json;
}

StatusOr<bool> use_cuda(std::string const& backend) {
  GCMOE_CHECK_ARG(backend == "auto" || backend == "cuda" || backend == "cpu",
                  "--backend {} (auto, cuda or cpu)", backend);
#if GCMOE_HAVE_CUDA
  bool const present = cuda::visible_device_count() > 0;
#else
  bool const present = false;
#endif
  if (backend == "cuda" && !present) {
    return failed_precondition_error("--backend cuda: no CUDA device (or a build without CUDA)");
  }
  return backend == "cuda" || (backend == "auto" && present);
}

StatusOr<std::unique_ptr<model::WeightStore>> make_store(
    [[maybe_unused]] LoadBenchOptions const& options, bool const cuda) {
  if (!cuda) {
    return std::unique_ptr<model::WeightStore>(std::make_unique<model::HostWeightStore>());
  }
#if GCMOE_HAVE_CUDA
  return std::unique_ptr<model::WeightStore>(
      std::make_unique<model::CudaWeightStore>(options.device, options.staging_mib << 20));
#else
  return failed_precondition_error("built without CUDA");
#endif
}

struct Run {
  std::int64_t ranks = 1;
  bool packed = true;
  bool cold = true;
};

StatusOr<nlohmann::json> load_once(LoadBenchOptions const& options, bool const cuda,
                                   std::filesystem::path const& dir, Run const& run) {
  if (run.cold) {
    GCMOE_RETURN_IF_ERROR(model::drop_page_cache(dir));
  }
  GCMOE_ASSIGN_OR_RETURN(model::ModelDescription const model, model::describe_model(dir));
  GCMOE_ASSIGN_OR_RETURN(checkpoint::Checkpoint const checkpoint,
                         checkpoint::Checkpoint::open(dir));
  std::unique_ptr<model::ExpertLayoutTransform> const transform =
      run.packed ? model::default_expert_transform(model.config) : nullptr;
  model::LoadOptions load;
  load.selection = {run.ranks, 0, false, nullptr, transform.get()};
  load.workers = options.workers;
  GCMOE_ASSIGN_OR_RETURN(std::unique_ptr<model::WeightStore> store, make_store(options, cuda));
  GCMOE_ASSIGN_OR_RETURN(model::LoadedWeights const loaded,
                         model::load_weights(checkpoint, model.spec, load, std::move(store)));
  model::LoadStats const& s = loaded.stats();
  return nlohmann::json{{"ranks", s.ranks},
                        {"rank", s.rank},
                        {"page_cache", run.cold ? "dropped" : "warm"},
                        {"transform", transform ? std::string(transform->name()) : "raw"},
                        {"destination", model::weight_location_name(loaded.store().location())},
                        {"tensors", s.tensors},
                        {"bytes_loaded", s.source_bytes},
                        {"expert_bytes", s.expert_bytes},
                        {"replicated_bytes", s.replicated_bytes},
                        {"stored_bytes", s.stored_bytes},
                        {"experts", s.experts},
                        {"workers", s.workers},
                        {"allocate_seconds", s.allocate_seconds},
                        {"seconds", s.seconds},
                        {"gb_per_s", s.gb_per_s()}};
}

StatusOr<nlohmann::json> bench_model(LoadBenchOptions const& options, bool const cuda,
                                     std::string const& name) {
  GCMOE_ASSIGN_OR_RETURN(nlohmann::json const release,
                         read_json(std::filesystem::path(options.configs) / name / "config.json"));
  std::int64_t const layers =
      name.starts_with("glm") ? options.glm_layers : options.deepseek_layers;
  GCMOE_ASSIGN_OR_RETURN(nlohmann::json const stack, model::layer_stack_config(release, layers));
  std::filesystem::path const dir = std::filesystem::path(options.dir) / name;
  spdlog::info("load-bench {}: writing a {}-layer full-width stack into {}", name, layers,
               dir.string());
  GCMOE_ASSIGN_OR_RETURN(model::SyntheticSummary const written,
                         model::write_synthetic_checkpoint(stack, dir, 2026, 0));
  spdlog::info("load-bench {}: wrote {} tensors, {:.2f} GB in {} shards in {:.1f} s ({:.2f} GB/s)",
               name, written.tensors, model::to_gb(written.bytes), written.shards, written.seconds,
               model::to_gb(written.bytes) / written.seconds);
  GCMOE_ASSIGN_OR_RETURN(model::ModelDescription const model, model::describe_model(dir));
  bool const has_transform = model::default_expert_transform(model.config) != nullptr;
  nlohmann::json runs = nlohmann::json::array();
  for (std::int64_t const ranks : options.ranks) {
    for (bool const packed : {true, false}) {
      if (!packed && !has_transform) {
        continue;  // raw is the only layout for this format
      }
      for (bool const cold : {true, false}) {
        if (cold && options.skip_cold) {
          continue;
        }
        GCMOE_ASSIGN_OR_RETURN(nlohmann::json result,
                               load_once(options, cuda, dir, {ranks, packed, cold}));
        runs.push_back(std::move(result));
      }
    }
  }
  if (!options.keep) {
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  }
  return nlohmann::json{{"model", name},
                        {"model_type", config::model_family_name(model.config.family)},
                        {"layers", layers},
                        {"moe_layers", model.config.moe_layer_count()},
                        {"experts_per_layer", model.config.moe.n_routed_experts},
                        {"write",
                         {{"tensors", written.tensors},
                          {"bytes", written.bytes},
                          {"shards", written.shards},
                          {"seconds", written.seconds}}},
                        {"runs", std::move(runs)}};
}

void print_table(nlohmann::json const& models) {
  fmt::print("{:<20} {:>5} {:>16} {:>8} {:>10} {:>10} {:>8} {:>7}\n", "model", "ranks", "transform",
             "cache", "GB/rank", "experts GB", "s", "GB/s");
  for (nlohmann::json const& m : models) {
    for (nlohmann::json const& r : m["runs"]) {
      fmt::print("{:<20} {:>5} {:>16} {:>8} {:>10.3f} {:>10.3f} {:>8.2f} {:>7.2f}\n",
                 m["model"].get<std::string>(), r["ranks"].get<std::int64_t>(),
                 r["transform"].get<std::string>(), r["page_cache"].get<std::string>(),
                 model::to_gb(r["bytes_loaded"].get<std::int64_t>()),
                 model::to_gb(r["expert_bytes"].get<std::int64_t>()), r["seconds"].get<double>(),
                 r["gb_per_s"].get<double>());
    }
  }
}

Status run_load_bench(LoadBenchOptions const& options) {
  GCMOE_ASSIGN_OR_RETURN(bool const cuda, use_cuda(options.backend));
  nlohmann::json report = {{"benchmark", "weight_load"},
                           {"backend", cuda ? "cuda" : "cpu"},
                           {"staging_bytes", cuda ? options.staging_mib << 20 : 0}};
#if GCMOE_HAVE_CUDA
  if (cuda) {
    GCMOE_ASSIGN_OR_RETURN(cuda::DeviceInfo const info, cuda::query_device(options.device));
    report["device"] = info.name;
  }
#endif
  nlohmann::json models = nlohmann::json::array();
  for (std::string const& name : options.models) {
    GCMOE_ASSIGN_OR_RETURN(nlohmann::json result, bench_model(options, cuda, name));
    models.push_back(std::move(result));
  }
  report["models"] = models;
  std::ofstream out(options.out, std::ios::trunc);
  out << report.dump(2) << '\n';
  out.close();
  if (!out) {
    return unavailable_error(fmt::format("cannot write {}", options.out));
  }
  print_table(models);
  fmt::print("load-bench: wrote {}\n", options.out);
  return Status();
}

}  // namespace

CommandRunner add_load_bench_command(CLI::App& app) {
  auto options = std::make_shared<LoadBenchOptions>();
  CLI::App* sub = app.add_subcommand(
      "load-bench", "Write full-width synthetic layer stacks and time loading them per rank");
  sub->add_option("--dir", options->dir, "Scratch directory for the synthetic checkpoints")
      ->required();
  sub->add_option("--out", options->out, "JSON report path")->required();
  sub->add_option("--configs", options->configs, "Directory of the release configs")
      ->capture_default_str();
  sub->add_option("--models", options->models, "Release config folders to bench")
      ->capture_default_str();
  sub->add_option("--glm-layers", options->glm_layers, "GLM-5.2 layers (1 dense, rest MoE)")
      ->capture_default_str();
  sub->add_option("--deepseek-layers", options->deepseek_layers, "DeepSeek layers (all MoE)")
      ->capture_default_str();
  sub->add_option("--ranks", options->ranks, "Rank counts; rank 0 of each is loaded")
      ->capture_default_str();
  sub->add_option("--backend", options->backend, "auto | cuda | cpu")->capture_default_str();
  sub->add_option("--device", options->device, "CUDA device")->capture_default_str();
  sub->add_option("--workers", options->workers, "Loader threads (0: one per core, max 16)")
      ->capture_default_str();
  sub->add_option("--staging-mib", options->staging_mib, "Pinned staging memory (CUDA)")
      ->capture_default_str();
  sub->add_flag("--keep", options->keep, "Keep the synthetic checkpoints");
  sub->add_flag("--skip-cold", options->skip_cold, "Only page-cache-warm loads");
  return [options] { return run_load_bench(*options); };
}

}  // namespace gcmoe::cli
