// `gcmoe make-tiny`: writes a small random checkpoint in a family's exact release layout
// (config.json, shards, index). `--family` takes the built-in tiny config of that family;
// `--config` takes any config.json instead (e.g. configs/models/tiny-glm-5.2/config.json, the
// embedded default model, whose weights are regenerated from the seed rather than committed).
#include <fmt/format.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "engine/common/check.h"
#include "engine/tiny/make_tiny.h"
#include "engine/tiny/tiny_config.h"
#include "server/cli/command.h"

namespace gcmoe::cli {
namespace {

struct MakeTinyOptions {
  std::string family;
  std::string config_path;
  std::string out;
  std::uint64_t seed = 0;
};

StatusOr<nlohmann::json> read_config(std::string const& path) {
  std::ifstream in(path);
  if (!in) {
    return not_found_error(fmt::format("cannot open config {}", path));
  }
  nlohmann::json config = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  GCMOE_CHECK_ARG(!config.is_discarded(), "{} is not valid JSON", path);
  return config;
}

Status run_make_tiny(MakeTinyOptions const& options) {
  nlohmann::json config;
  if (!options.config_path.empty()) {
    GCMOE_ASSIGN_OR_RETURN(config, read_config(options.config_path));
  } else {
    GCMOE_ASSIGN_OR_RETURN(config::ModelFamily const family, tiny::parse_family(options.family));
    config = tiny::tiny_config_json(family);
  }
  auto const start = std::chrono::steady_clock::now();
  GCMOE_ASSIGN_OR_RETURN(tiny::TinyModelSummary const summary,
                         tiny::write_tiny_model(config, options.out, options.seed));
  double const seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  fmt::print("make-tiny: {} seed {}: {} tensors, {:.2f} MB in {} shards -> {} ({:.2f} s)\n",
             config::model_family_name(summary.family), options.seed, summary.tensors,
             static_cast<double>(summary.tensor_bytes) / 1e6, summary.shards, options.out, seconds);
  return Status();
}

}  // namespace

CommandRunner add_make_tiny_command(CLI::App& app) {
  auto options = std::make_shared<MakeTinyOptions>();
  CLI::App* sub = app.add_subcommand(
      "make-tiny", "Write a tiny random checkpoint in a family's exact release layout");
  auto* family = sub->add_option("--family", options->family,
                                 "glm_moe_dsa | deepseek_v41 | deepseek_v4 (built-in tiny config)");
  auto* config = sub->add_option("--config", options->config_path,
                                 "Use this config.json instead of the built-in tiny one");
  family->excludes(config);
  config->excludes(family);
  sub->add_option("--out", options->out, "Output directory")->required();
  sub->add_option("--seed", options->seed, "Random seed (same seed, same bytes)")
      ->capture_default_str();
  return [options, family, config] {
    if (family->count() == 0 && config->count() == 0) {
      return invalid_argument_error("make-tiny needs --family or --config");
    }
    return run_make_tiny(*options);
  };
}

}  // namespace gcmoe::cli
