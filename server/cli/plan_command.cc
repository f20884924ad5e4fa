// `gcmoe plan --model DIR --ranks 8 --gpu h200`: the per-rank GPU memory plan (weights, KV
// blocks, max batch) for serving DIR's model on N GPUs, and the `gcmoe serve` flags it implies.
// Reads only DIR/config.json (the weight spec gives the bytes), so it works on a config-only
// directory such as configs/models/glm-5.2. `--format json` prints the preset form kept in
// configs/serving/; `--out FILE` writes it.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "engine/common/check.h"
#include "engine/model/weights/model_weight_spec.h"
#include "engine/plan/memory_plan.h"
#include "server/cli/command.h"

namespace gcmoe::cli {
namespace {

struct PlanFlags {
  std::string model;
  std::string gpu = "h200";
  double gpu_memory_gib = 0.0;
  std::string format = "text";
  std::string out;
  plan::PlanOptions options;
  double runtime_reserve_gib = 3.0;
};

Status run_plan(PlanFlags& flags) {
  GCMOE_CHECK_ARG(!flags.model.empty(), "--model is required");
  GCMOE_ASSIGN_OR_RETURN(model::ModelDescription const model,
                         model::describe_model(std::filesystem::path(flags.model)));
  if (flags.gpu_memory_gib > 0.0) {
    flags.options.gpu = {flags.gpu, fmt::format("{:.1f} GiB (given)", flags.gpu_memory_gib),
                         static_cast<std::int64_t>(flags.gpu_memory_gib * (1LL << 30))};
  } else {
    GCMOE_ASSIGN_OR_RETURN(flags.options.gpu, plan::find_gpu(flags.gpu));
  }
  flags.options.runtime_reserve_bytes =
      static_cast<std::int64_t>(flags.runtime_reserve_gib * (1LL << 30));
  GCMOE_ASSIGN_OR_RETURN(plan::MemoryPlan const result,
                         plan::make_memory_plan(model.config, model.spec, flags.options));
  nlohmann::json json = plan::plan_json(result);
  json["model_dir"] = std::filesystem::path(flags.model).filename().string();
  std::string const text = flags.format == "json" ? json.dump(2) + "\n" : plan::plan_text(result);
  std::fputs(text.c_str(), stdout);
  if (!flags.out.empty()) {
    std::ofstream out(flags.out);
    out << json.dump(2) << "\n";
    GCMOE_CHECK_INTERNAL(static_cast<bool>(out), "cannot write {}", flags.out);
    spdlog::info("plan: written to {}", flags.out);
  }
  return Status();
}

}  // namespace

CommandRunner add_plan_command(CLI::App& app) {
  auto flags = std::make_shared<PlanFlags>();
  plan::PlanOptions& o = flags->options;
  CLI::App* sub = app.add_subcommand(
      "plan", "Per-rank GPU memory plan (weights, KV blocks, max batch) and serve flags");
  sub->add_option("--model", flags->model, "Model directory with config.json")->required();
  sub->add_option("--ranks", o.ranks, "Expert-parallel ranks (GPUs)")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  sub->add_option("--gpu", flags->gpu, "GPU kind: h100, h200, b200")->capture_default_str();
  sub->add_option("--gpu-memory-gib", flags->gpu_memory_gib,
                  "GPU memory in GiB instead of the --gpu catalog value");
  sub->add_option("--gpu-memory-utilization", o.gpu_memory_utilization,
                  "Fraction of GPU memory the plan may use")
      ->capture_default_str();
  sub->add_option("--runtime-reserve-gib", flags->runtime_reserve_gib,
                  "CUDA context, NCCL and library workspaces")
      ->capture_default_str();
  sub->add_option("--kv-block-size", o.kv_block_size, "Token positions per KV block")
      ->capture_default_str();
  sub->add_option("--max-batch-tokens", o.max_batch_tokens, "Tokens per step per rank")
      ->capture_default_str();
  sub->add_option("--max-running-cap", o.max_running_cap, "Upper bound of max running requests")
      ->capture_default_str();
  sub->add_option("--context-tokens", o.context_tokens,
                  "Prompt + max_new_tokens a typical request reserves")
      ->capture_default_str();
  sub->add_flag("--with-mtp", o.with_mtp, "Also hold the MTP / DSpark stages");
  sub->add_option("--format", flags->format, "text or json")
      ->capture_default_str()
      ->check(CLI::IsMember({"text", "json"}));
  sub->add_option("--out", flags->out, "Also write the JSON preset to this file");
  return [flags] { return run_plan(*flags); };
}

}  // namespace gcmoe::cli
