#include "engine/model/weight_loader.h"

#include <spdlog/spdlog.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <utility>

#include "engine/common/check.h"
#include "engine/model/load_progress.h"

namespace gcmoe::model {
namespace {

// Asks the kernel to read a source range ahead of the copy (async readahead of the whole tensor
// instead of fault-sized pieces). Advisory: the mapping is read-only and stays unchanged.
void prefetch(std::span<std::byte const> const bytes) {
  if (bytes.empty()) {
    return;
  }
  auto const page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  auto const begin = reinterpret_cast<std::uintptr_t>(bytes.data()) / page * page;
  auto const end = reinterpret_cast<std::uintptr_t>(bytes.data()) + bytes.size();
  ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_WILLNEED);
}

Status run_item(LoadItem const& item, ExpertLayoutTransform const* transform, WeightStore& store,
                int const worker, std::vector<std::byte>& scratch) {
  if (auto const* copy = std::get_if<CopyWork>(&item.work)) {
    prefetch(copy->source.bytes);
    return store.write(worker, item.destination.offset, copy->source.bytes);
  }
  auto const& expert = std::get<ExpertWork>(item.work);
  GCMOE_CHECK_INTERNAL(transform != nullptr, "packed expert item without a transform");
  for (checkpoint::TensorView const* view :
       {&expert.source.gate, &expert.source.up, &expert.source.down}) {
    prefetch(view->bytes);
  }
  scratch.resize(static_cast<std::size_t>(item.destination.bytes));
  GCMOE_RETURN_IF_ERROR(transform->pack(*expert.spec, expert.source, scratch));
  return store.write(worker, item.destination.offset, scratch);
}

int worker_count(int const requested) {
  if (requested > 0) {
    return requested;
  }
  int const hardware = static_cast<int>(std::thread::hardware_concurrency());
  return std::clamp(hardware, 1, kMaxWorkers);
}

// Runs every item of `plan` on `workers` threads, logging progress from the calling thread.
Status stream_items(LoadPlan const& plan, ExpertLayoutTransform const* transform,
                    WeightStore& store, int const workers, LoadProgress& progress) {
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex mutex;
  std::condition_variable finished;
  int running = workers;
  Status first_error;
  {
    std::vector<std::jthread> threads;
    threads.reserve(static_cast<std::size_t>(workers));
    for (int w = 0; w < workers; ++w) {
      threads.emplace_back([&, w] {
        std::vector<std::byte> scratch;
        while (!failed.load(std::memory_order_relaxed)) {
          std::size_t const i = next.fetch_add(1);
          if (i >= plan.items.size()) {
            break;
          }
          LoadItem const& item = plan.items[i];
          Status const status = run_item(item, transform, store, w, scratch);
          if (!status.ok()) {
            std::lock_guard<std::mutex> const lock(mutex);
            if (first_error.ok()) {
              first_error = status;
            }
            failed = true;
            break;
          }
          progress.add(item.tensors, item.source_bytes);
        }
        std::lock_guard<std::mutex> const lock(mutex);
        --running;
        finished.notify_one();
      });
    }
    std::unique_lock<std::mutex> lock(mutex);
    while (running > 0) {
      finished.wait_for(lock, std::chrono::milliseconds(100));
      lock.unlock();
      progress.log_if_due();
      lock.lock();
    }
  }  // joins every worker
  // Flushed on failure too: no copy may still read staging memory when the store goes away.
  Status const flushed = store.flush();
  GCMOE_RETURN_IF_ERROR(first_error);
  return flushed;
}

}  // namespace

double LoadStats::gb_per_s() const {
  return seconds > 0.0 ? to_gb(source_bytes) / seconds : 0.0;
}

LoadedWeights::LoadedWeights(std::unique_ptr<WeightStore> store, LoadPlan plan, LoadStats stats)
    : store_(std::move(store)),
      tensors_(std::move(plan.tensors)),
      expert_blocks_(std::move(plan.expert_blocks)),
      stats_(stats) {}

StatusOr<WeightPlacement> LoadedWeights::find(std::string_view const name) const {
  auto const it = tensors_.find(std::string(name));
  if (it == tensors_.end()) {
    return not_found_error(
        fmt::format("tensor '{}' is not loaded on rank {} of {}", name, stats_.rank, stats_.ranks));
  }
  return it->second;
}

StatusOr<std::span<std::byte const>> LoadedWeights::host_bytes(
    WeightPlacement const placement) const {
  if (store_->location() != WeightLocation::kHost) {
    return failed_precondition_error("weights live in device memory, not host memory");
  }
  GCMOE_CHECK_ARG(placement.offset >= 0 && placement.offset + placement.bytes <= store_->size(),
                  "placement [{}, +{}) outside the {}-byte store", placement.offset,
                  placement.bytes, store_->size());
  return std::span<std::byte const>(store_->data() + placement.offset,
                                    static_cast<std::size_t>(placement.bytes));
}

StatusOr<LoadedWeights> load_weights(checkpoint::Checkpoint const& checkpoint,
                                     ModelSpec const& spec, LoadOptions const& options,
                                     std::unique_ptr<WeightStore> store) {
  GCMOE_CHECK_ARG(store != nullptr, "load_weights needs a weight store");
  RankSelection const& selection = options.selection;
  GCMOE_ASSIGN_OR_RETURN(LoadPlan plan,
                         plan_load(checkpoint, spec, selection, options.copy_piece_bytes));
  LoadStats stats;
  stats.ranks = selection.ranks;
  stats.rank = selection.rank;
  stats.tensors = plan.tensor_count;
  stats.source_bytes = plan.source_bytes;
  stats.stored_bytes = plan.store_bytes;
  stats.expert_bytes = plan.expert_source_bytes;
  stats.replicated_bytes = plan.replicated_bytes;
  stats.experts = plan.experts;
  stats.workers = worker_count(options.workers);

  std::string const label =
      fmt::format("load {} rank {}/{} -> {}", config::model_family_name(spec.family),
                  selection.rank, selection.ranks, weight_location_name(store->location()));
  auto const alloc_start = LoadProgress::Clock::now();
  GCMOE_RETURN_IF_ERROR(store->allocate(plan.store_bytes, stats.workers));
  stats.allocate_seconds =
      std::chrono::duration<double>(LoadProgress::Clock::now() - alloc_start).count();

  LoadProgress progress(label, plan.tensor_count, plan.source_bytes, options.progress_interval);
  GCMOE_RETURN_IF_ERROR(stream_items(plan, selection.transform, *store, stats.workers, progress));
  stats.seconds = progress.elapsed_seconds();
  spdlog::info(
      "{}: loaded {} tensors, {:.3f} GB in {:.2f} s = {:.2f} GB/s ({} workers; allocation {:.2f} "
      "s); rank bytes {:.3f} GB = experts {:.3f} GB ({} experts in {} blocks{}) + replicated "
      "{:.3f} GB; store {:.3f} GB",
      label, stats.tensors, to_gb(stats.source_bytes), stats.seconds, stats.gb_per_s(),
      stats.workers, stats.allocate_seconds, to_gb(stats.source_bytes), to_gb(stats.expert_bytes),
      stats.experts, plan.expert_blocks.size(),
      selection.transform != nullptr ? fmt::format(", packed {}", selection.transform->name())
                                     : std::string(", release layout"),
      to_gb(stats.replicated_bytes), to_gb(stats.stored_bytes));
  return LoadedWeights(std::move(store), std::move(plan), stats);
}

}  // namespace gcmoe::model
