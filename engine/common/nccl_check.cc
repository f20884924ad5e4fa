#include "engine/common/nccl_check.h"

#include <fmt/format.h>

namespace gcmoe {

Status nccl_status(ncclResult_t result, ncclComm_t comm, char const* call, char const* file,
                   int line) {
  char const* const last = comm != nullptr ? ncclGetLastError(comm) : nullptr;
  std::string const message = fmt::format(
      "NCCL error {} ({}) in {}{}{} [{}:{}]", static_cast<int>(result), ncclGetErrorString(result),
      call, last != nullptr && *last != '\0' ? ": " : "", last != nullptr ? last : "", file, line);
  bool const peer_gone = result == ncclRemoteError || result == ncclSystemError;
  return Status(peer_gone ? StatusCode::kUnavailable : StatusCode::kInternal, message);
}

}  // namespace gcmoe
