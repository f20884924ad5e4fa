#include "client/detailed_csv.h"

#include <fmt/format.h>

#include <fstream>

#include "client/percentiles.h"
#include "engine/common/check.h"

namespace gcmoe::client {
namespace {

std::string quoted(std::string const& text) {
  std::string out = "\"";
  for (char const c : text) {
    if (c == '"') {
      out += '"';
    }
    out += (c == '\n' || c == '\r') ? ' ' : c;
  }
  return out + "\"";
}

}  // namespace

std::string detailed_csv(std::vector<RequestOutcome> const& outcomes) {
  std::string csv =
      "index,request_id,status,start_ms,prompt_tokens,output_tokens,ttft_ms,tpot_ms,e2el_ms,"
      "mean_itl_ms,finish_reason,error\n";
  for (RequestOutcome const& o : outcomes) {
    std::optional<double> const tpot = tpot_s(o);
    csv += fmt::format("{},{},{},{:.3f},{},{},{:.3f},{},{:.3f},{:.3f},{},{}\n", o.index,
                       quoted(o.request_id), o.status_code, o.start_s * 1000.0, o.prompt_tokens,
                       o.output_tokens, o.ttft_s * 1000.0,
                       tpot ? fmt::format("{:.3f}", *tpot * 1000.0) : std::string(),
                       o.e2el_s * 1000.0, mean(o.itl_s) * 1000.0, o.finish_reason, quoted(o.error));
  }
  return csv;
}

Status write_detailed_csv(std::filesystem::path const& path,
                          std::vector<RequestOutcome> const& outcomes) {
  std::error_code error;
  if (path.has_parent_path()) {
    std::filesystem::create_directories(path.parent_path(), error);
    GCMOE_CHECK_INTERNAL(!error, "cannot create {}: {}", path.parent_path().string(),
                         error.message());
  }
  std::ofstream out(path);
  out << detailed_csv(outcomes);
  GCMOE_CHECK_INTERNAL(static_cast<bool>(out), "cannot write {}", path.string());
  return Status();
}

}  // namespace gcmoe::client
