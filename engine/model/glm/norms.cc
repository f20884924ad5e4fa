#include "engine/model/glm/norms.h"

#include <cmath>

namespace gcmoe::model::glm {

void rms_norm(std::span<float> x, std::span<float const> weight, float const eps) {
  std::size_t const width = weight.size();
  for (std::size_t start = 0; start + width <= x.size(); start += width) {
    float* row = x.data() + start;
    float sum = 0.0f;
    for (std::size_t i = 0; i < width; ++i) {
      sum += row[i] * row[i];
    }
    float const scale = 1.0f / std::sqrt(sum / static_cast<float>(width) + eps);
    for (std::size_t i = 0; i < width; ++i) {
      row[i] = weight[i] * (row[i] * scale);
    }
  }
}

void layer_norm(std::span<float> x, std::span<float const> weight, std::span<float const> bias,
                float const eps) {
  std::size_t const width = weight.size();
  for (std::size_t start = 0; start + width <= x.size(); start += width) {
    float* row = x.data() + start;
    float mean = 0.0f;
    for (std::size_t i = 0; i < width; ++i) {
      mean += row[i];
    }
    mean /= static_cast<float>(width);
    float var = 0.0f;
    for (std::size_t i = 0; i < width; ++i) {
      var += (row[i] - mean) * (row[i] - mean);
    }
    var /= static_cast<float>(width);
    float const scale = 1.0f / std::sqrt(var + eps);
    for (std::size_t i = 0; i < width; ++i) {
      row[i] = (row[i] - mean) * scale * weight[i] + bias[i];
    }
  }
}

}  // namespace gcmoe::model::glm
