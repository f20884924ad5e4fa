#include "engine/model/step_model_factory.h"

#include <fmt/format.h>

#include "engine/common/check.h"
#include "engine/config/parse_model_config.h"
#include "engine/model/glm/glm_model_loader.h"

namespace gcmoe::model {

StatusOr<std::unique_ptr<runtime::StepModel>> load_step_model(StepModelOptions const& options,
                                                              runtime::Communicator& comm) {
  GCMOE_CHECK_ARG(comm.world_size() >= 1 && comm.rank() >= 0 && comm.rank() < comm.world_size(),
                  "rank {} of {} is not a valid rank", comm.rank(), comm.world_size());
  GCMOE_ASSIGN_OR_RETURN(config::ModelConfig const config,
                         config::load_model_config(options.model_dir / "config.json"));
  switch (options.backend) {
    case StepBackend::kCpu:
      break;
    case StepBackend::kCuda:
      return unimplemented_error("the CUDA step model is not built yet (use the CPU backend)");
  }
  switch (config.family) {
    case config::ModelFamily::kGlmMoeDsa:
      return glm::load_glm_step_model(options, comm);
    case config::ModelFamily::kDeepseekV4:
    case config::ModelFamily::kDeepseekV41:
      break;
  }
  return unimplemented_error(fmt::format("{}: the {} step model is not built yet",
                                         options.model_dir.string(),
                                         config::model_family_name(config.family)));
}

}  // namespace gcmoe::model
