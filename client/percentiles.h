#pragma once
// Summary statistics as numpy computes them, so numbers match `vllm bench serve`: percentiles
// by linear interpolation between closest ranks (np.percentile's default), population standard
// deviation (np.std), and 0 for an empty sample (vLLM reports np.mean(x or 0)).

#include <vector>

namespace gcmoe::client {

// `p` in [0, 100]. `values` need not be sorted.
double percentile(std::vector<double> values, double p);
double mean(std::vector<double> const& values);
double median(std::vector<double> const& values);
double population_stddev(std::vector<double> const& values);

}  // namespace gcmoe::client
