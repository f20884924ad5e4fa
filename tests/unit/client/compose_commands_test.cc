// Every command line of deploy/docker-compose.yml (service commands and the health check) and
// the Dockerfile's CMD, parsed by the real `gcmoe` CLI (the same subcommand factories main.cc
// registers), so the deployment cannot drift from the flags. The server's scheduler limits must
// be the committed 8×H200 preset's.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "server/cli/command.h"
#include "tests/support/catch.h"

namespace gcmoe {
namespace {

std::string read_file(std::string const& path) {
  std::ifstream in(path);
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The JSON-style flow list that follows each `key` (e.g. "command:") in `text`.
std::vector<std::vector<std::string>> flow_lists_after(std::string const& text,
                                                       std::string const& key) {
  std::vector<std::vector<std::string>> lists;
  for (std::size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + 1)) {
    std::size_t const open = text.find_first_not_of(' ', at + key.size());
    if (open == std::string::npos || text[open] != '[') {
      continue;
    }
    std::size_t const close = text.find(']', open);
    REQUIRE(close != std::string::npos);
    nlohmann::json const list = nlohmann::json::parse(text.substr(open, close - open + 1));
    lists.push_back(list.get<std::vector<std::string>>());
  }
  return lists;
}

// Builds the gcmoe CLI as main.cc does and parses `args` (no program name); the name of the
// subcommand that parsed. Throws CLI::ParseError on a flag the CLI does not know.
std::string parse_with_gcmoe_cli(std::vector<std::string> const& args) {
  CLI::App app{"gcmoe", "gcmoe"};
  std::string log_level;
  app.add_option("--log-level", log_level, "");
  app.require_subcommand(1);
  cli::add_devices_command(app);
  cli::add_smoke_command(app);
  cli::add_inspect_command(app);
  cli::add_make_tiny_command(app);
  cli::add_load_bench_command(app);
  cli::add_plan_command(app);
  cli::add_serve_command(app);
  cli::add_bench_command(app);
  cli::add_generate_command(app);
  cli::add_health_command(app);
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  app.parse(reversed);
  for (CLI::App const* sub : app.get_subcommands()) {
    return sub->get_name();
  }
  return "";
}

bool contains_pair(std::vector<std::string> const& args, std::string const& flag,
                   std::string const& value) {
  for (std::size_t i = 0; i + 1 < args.size(); ++i) {
    if (args[i] == flag && args[i + 1] == value) {
      return true;
    }
  }
  return false;
}

TEST_CASE("docker-compose.yml command lines parse with the real gcmoe CLI") {
  std::string const compose = read_file(GCMOE_SOURCE_DIR "/deploy/docker-compose.yml");
  std::vector<std::vector<std::string>> commands = flow_lists_after(compose, "command:");
  REQUIRE(commands.size() == 2);  // gcmoe (serve) and loadgen (bench)
  std::vector<std::vector<std::string>> const checks = flow_lists_after(compose, "test:");
  REQUIRE(checks.size() == 1);
  std::vector<std::string> health = checks.front();
  REQUIRE(health.size() > 2);
  CHECK(health[0] == "CMD");
  CHECK(health[1] == "gcmoe");
  commands.emplace_back(health.begin() + 2, health.end());

  std::string const dockerfile = read_file(GCMOE_SOURCE_DIR "/deploy/Dockerfile");
  std::vector<std::vector<std::string>> const cmd = flow_lists_after(dockerfile, "\nCMD");
  REQUIRE(cmd.size() == 1);
  commands.push_back(cmd.front());

  std::vector<std::string> parsed;
  for (std::vector<std::string> const& args : commands) {
    std::string joined;
    for (std::string const& a : args) {
      joined += a + " ";
    }
    INFO("gcmoe " << joined);
    std::string name;
    try {
      name = parse_with_gcmoe_cli(args);
    } catch (CLI::ParseError const& error) {
      FAIL("the gcmoe CLI rejects it: " << error.what());
    }
    CHECK(name == args.front());
    parsed.push_back(name);
  }
  CHECK(parsed == std::vector<std::string>{"serve", "bench", "health", "serve"});

  // The serve limits are the preset `gcmoe plan` made for GLM-5.2 on 8×H200.
  nlohmann::json const preset =
      nlohmann::json::parse(read_file(GCMOE_SOURCE_DIR "/configs/serving/glm-5.2-8xh200.json"));
  std::vector<std::string> const& serve = commands.front();
  for (auto const& [key, flag] :
       {std::pair{"ranks", "--ranks"}, std::pair{"kv_blocks", "--kv-blocks"},
        std::pair{"kv_block_size", "--kv-block-size"}, std::pair{"max_running", "--max-running"},
        std::pair{"max_batch_tokens", "--max-batch-tokens"},
        std::pair{"max_waiting", "--max-waiting"}}) {
    std::string const value = std::to_string(preset["serve"][key].get<std::int64_t>());
    INFO(flag << " " << value);
    CHECK(contains_pair(serve, flag, value));
  }
  // The stop grace period outlasts the drain timeout.
  CHECK(contains_pair(serve, "--shutdown-timeout", "60"));
  CHECK(compose.find("stop_grace_period: 90s") != std::string::npos);
}

TEST_CASE("The CLI parser used above rejects unknown flags") {
  CHECK_THROWS_AS(parse_with_gcmoe_cli({"bench", "--max-concurency", "4"}), CLI::ParseError);
  CHECK_THROWS_AS(parse_with_gcmoe_cli({"health", "--target"}), CLI::ParseError);
  CHECK(parse_with_gcmoe_cli({"generate", "--prompt-ids", "1,2,3"}) == "generate");
  CHECK(parse_with_gcmoe_cli({"plan", "--model", "/m", "--ranks", "8", "--gpu", "h200"}) == "plan");
}

}  // namespace
}  // namespace gcmoe
