#pragma once
// The front-end's lifecycle, shared by every RPC handler thread:
//   loading (not ready, with a reason) --mark_ready--> serving --begin_drain--> draining.
// Draining is final. Readiness (what grpc.health.v1 reports for the service name) is
// ready && !draining; a listener hears every change of it (the server updates health there).

#include <functional>
#include <mutex>
#include <optional>
#include <string>

#include "engine/common/status.h"
#include "server/frontend/request_validation.h"

namespace gcmoe::frontend {

// The message of a server with no model: Generate and the model RPCs answer UNAVAILABLE with it.
inline constexpr char kNoModelMessage[] = "no model loaded: model families land with issue 8";

struct ServingSnapshot {
  bool ready = false;
  bool draining = false;
  std::string message;                // why not ready, "draining", or "serving"
  std::optional<ModelLimits> limits;  // set once a model is loaded
};

class ServingState {
 public:
  using ReadinessListener = std::function<void(bool serving)>;

  explicit ServingState(std::string not_ready_reason);

  // Called with the current readiness at once, then on every change. One listener.
  void set_readiness_listener(ReadinessListener listener);
  // All ranks loaded the model. FAILED_PRECONDITION while draining.
  Status mark_ready(ModelLimits const& limits);
  // The ranks failed or are restarting: not ready (readiness NOT_SERVING) with a reason, until
  // the next mark_ready. No effect while draining.
  void mark_not_ready(std::string reason);
  void begin_drain();

  ServingSnapshot snapshot() const;
  // OK while serving; UNAVAILABLE naming the reason otherwise.
  Status check_serving() const;

 private:
  void notify(bool serving);

  mutable std::mutex mutex_;
  ServingSnapshot state_;
  ReadinessListener listener_;
};

}  // namespace gcmoe::frontend
