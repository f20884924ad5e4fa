#pragma once
// RAII CUDA graph made by stream capture: the captured graph and its executable, move-only.

#include <cuda_runtime.h>

#include <utility>
#include <vector>

#include "engine/common/cuda_check.h"

namespace gcmoe::cuda {

class Graph {
 public:
  Graph() = default;
  Graph(Graph const&) = delete;
  Graph& operator=(Graph const&) = delete;
  Graph(Graph&& other) noexcept
      : graph_(std::exchange(other.graph_, nullptr)), exec_(std::exchange(other.exec_, nullptr)) {}
  Graph& operator=(Graph&& other) noexcept {
    if (this != &other) {
      release();
      graph_ = std::exchange(other.graph_, nullptr);
      exec_ = std::exchange(other.exec_, nullptr);
    }
    return *this;
  }
  ~Graph() { release(); }

  // Captures what `body(stream)` enqueues on `stream` (and on streams it forks into and joins
  // back) and instantiates it. A failing body ends the capture and returns its status.
  template <typename Body>
  static StatusOr<Graph> capture(cudaStream_t stream, Body&& body) {
    Graph out;
    GCMOE_CHECK_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    Status const status = body(stream);
    cudaError_t const end = cudaStreamEndCapture(stream, &out.graph_);
    GCMOE_RETURN_IF_ERROR(status);
    GCMOE_CHECK_CUDA(end);
    GCMOE_CHECK_CUDA(cudaGraphInstantiate(&out.exec_, out.graph_, 0));
    return out;
  }

  Status launch(cudaStream_t stream) const {
    GCMOE_CHECK_CUDA(cudaGraphLaunch(exec_, stream));
    return Status();
  }

  // Kernel nodes in the captured graph (tests check the operator's shape).
  StatusOr<int> kernel_nodes() const {
    std::size_t count = 0;
    GCMOE_CHECK_CUDA(cudaGraphGetNodes(graph_, nullptr, &count));
    std::vector<cudaGraphNode_t> nodes(count);
    GCMOE_CHECK_CUDA(cudaGraphGetNodes(graph_, nodes.data(), &count));
    int kernels = 0;
    for (cudaGraphNode_t const node : nodes) {
      cudaGraphNodeType type{};
      GCMOE_CHECK_CUDA(cudaGraphNodeGetType(node, &type));
      kernels += type == cudaGraphNodeTypeKernel ? 1 : 0;
    }
    return kernels;
  }

 private:
  void release() {
    if (exec_ != nullptr) {
      cudaGraphExecDestroy(exec_);
    }
    if (graph_ != nullptr) {
      cudaGraphDestroy(graph_);
    }
    exec_ = nullptr;
    graph_ = nullptr;
  }

  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
};

}  // namespace gcmoe::cuda
