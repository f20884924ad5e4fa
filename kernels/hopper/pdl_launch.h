#pragma once
// One kernel launch that may start while the previous kernel in its stream still runs
// (programmatic dependent launch, when overlap_previous) or an ordinary one. A kernel launched to
// overlap must wait for the previous grid (hopper::wait_prior_grid, griddepcontrol.wait) before it
// reads that grid's outputs; the previous one lets it start early with hopper::launch_dependents.

#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

namespace gcmoe::kernels::hopper {

// cluster_x > 1: launched in clusters of cluster_x CTAs along x (grid.x a multiple of it).
template <typename... Params, typename... Args>
cudaError_t launch_with_pdl_in_clusters(void (*kernel)(Params...), dim3 grid, dim3 block,
                                        std::size_t dynamic_smem_bytes, cudaStream_t stream,
                                        bool overlap_previous, unsigned cluster_x, Args&&... args) {
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = dynamic_smem_bytes;
  config.stream = stream;
  cudaLaunchAttribute attributes[2]{};
  unsigned count = 0;
  if (overlap_previous) {
    attributes[count].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attributes[count].val.programmaticStreamSerializationAllowed = 1;
    ++count;
  }
  if (cluster_x > 1) {
    attributes[count].id = cudaLaunchAttributeClusterDimension;
    attributes[count].val.clusterDim.x = cluster_x;
    attributes[count].val.clusterDim.y = 1;
    attributes[count].val.clusterDim.z = 1;
    ++count;
  }
  config.attrs = attributes;
  config.numAttrs = count;
  return cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...);
}

template <typename... Params, typename... Args>
cudaError_t launch_with_pdl(void (*kernel)(Params...), dim3 grid, dim3 block,
                            std::size_t dynamic_smem_bytes, cudaStream_t stream,
                            bool overlap_previous, Args&&... args) {
  return launch_with_pdl_in_clusters(kernel, grid, block, dynamic_smem_bytes, stream,
                                     overlap_previous, 1u, std::forward<Args>(args)...);
}

}  // namespace gcmoe::kernels::hopper
