#include "client/goodput.h"

#include <charconv>
#include <cmath>
#include <optional>

#include "engine/common/check.h"

namespace gcmoe::client {
namespace {

std::optional<double> parse_number(std::string const& text) {
  double value = 0.0;
  char const* const end = text.data() + text.size();
  auto const [ptr, error] = std::from_chars(text.data(), end, value);
  if (error != std::errc() || ptr != end || !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

}  // namespace

StatusOr<GoodputSlo> parse_goodput(std::vector<std::string> const& items) {
  GoodputSlo slo;
  for (std::string const& item : items) {
    std::size_t const colon = item.find(':');
    GCMOE_CHECK_ARG(colon != std::string::npos,
                    "--goodput item '{}' is not name:milliseconds (e.g. ttft:500)", item);
    std::string const name = item.substr(0, colon);
    std::optional<double> const value = parse_number(item.substr(colon + 1));
    GCMOE_CHECK_ARG(value.has_value() && *value >= 0.0,
                    "--goodput item '{}': '{}' is not a non-negative number of milliseconds", item,
                    item.substr(colon + 1));
    std::optional<double>* slot = nullptr;
    if (name == "ttft") {
      slot = &slo.ttft_ms;
    } else if (name == "tpot") {
      slot = &slo.tpot_ms;
    } else if (name == "e2el") {
      slot = &slo.e2el_ms;
    }
    GCMOE_CHECK_ARG(slot != nullptr, "--goodput item '{}': unknown metric '{}' (ttft, tpot, e2el)",
                    item, name);
    GCMOE_CHECK_ARG(!slot->has_value(), "--goodput names '{}' twice", name);
    *slot = *value;
  }
  return slo;
}

bool meets_slo(GoodputSlo const& slo, double ttft_ms, double tpot_ms, double e2el_ms) {
  return (!slo.ttft_ms || ttft_ms <= *slo.ttft_ms) && (!slo.tpot_ms || tpot_ms <= *slo.tpot_ms) &&
         (!slo.e2el_ms || e2el_ms <= *slo.e2el_ms);
}

}  // namespace gcmoe::client
