#include "engine/model/glm/dense_mlp.h"

#include <cmath>
#include <vector>

#include "engine/model/glm/linear.h"

namespace gcmoe::model::glm {

void swiglu_mlp(SwigluWeights const& weights, std::span<float const> x, std::span<float> out) {
  std::int64_t const hidden = weights.gate.in;
  std::int64_t const inter = weights.gate.out;
  std::int64_t const rows = hidden > 0 ? static_cast<std::int64_t>(x.size()) / hidden : 0;
  std::vector<float> g(static_cast<std::size_t>(rows * inter));
  std::vector<float> u(g.size());
  linear(x, weights.gate.w, hidden, inter, g);
  linear(x, weights.up.w, hidden, inter, u);
  for (std::size_t i = 0; i < g.size(); ++i) {
    g[i] = g[i] / (1.0f + std::exp(-g[i])) * u[i];
  }
  linear(g, weights.down.w, inter, hidden, out);
}

}  // namespace gcmoe::model::glm
