#pragma once
// The command-line flags every benchmark that times its columns in rounds
// (bench/common/column_rounds.h) takes: --out, --reps, --rounds and --commit, with one meaning and
// one range everywhere, and --tokens over a sweep (tests/unit/bench/moe_bench_cli_test.sh checks
// them).

#include <CLI/CLI.hpp>
#include <span>
#include <string>
#include <vector>

namespace gcmoe::bench {

inline void add_column_bench_flags(CLI::App& app, std::string& out, int& reps, int& rounds,
                                   std::string& commit) {
  app.add_option("--out", out, "JSON output file");
  app.add_option("--reps", reps, "timed repetitions per column and round")
      ->check(CLI::Range(1, 10000));
  app.add_option("--rounds", rounds,
                 "rounds over the columns, the order reversed every other round; a column's time "
                 "is the median of its rounds")
      ->check(CLI::Range(1, 100));
  app.add_option("--commit", commit, "commit the binary was built from");
}

// --tokens N: only T = N of `sweep` (0, the default: the whole sweep). A T outside the sweep would
// time nothing and still write a JSON file: refused instead.
inline void add_sweep_tokens_flag(CLI::App& app, int& only_tokens, std::span<int const> sweep) {
  std::vector<int> allowed = {0};
  allowed.insert(allowed.end(), sweep.begin(), sweep.end());
  app.add_option("--tokens", only_tokens, "only this T of the sweep (0: the whole sweep)")
      ->check(CLI::IsMember(allowed));
}

}  // namespace gcmoe::bench
