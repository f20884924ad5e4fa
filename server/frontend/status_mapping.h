#pragma once
// gcmoe::Status <-> grpc::Status. The codes are numerically identical (engine/common/status.h);
// the .cc proves it at compile time, so the mapping is a cast, 1:1 both ways.

#include <grpcpp/support/status.h>

#include "engine/common/status.h"

namespace gcmoe::frontend {

grpc::Status to_grpc_status(Status const& status);
Status from_grpc_status(grpc::Status const& status);

}  // namespace gcmoe::frontend
