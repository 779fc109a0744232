// Replays a recorded sequence of launches (one decode step) as a CUDA graph, one graph per key
// (the padded batch size), because at small batch sizes the launch overhead of a step's ~10
// launches per layer dominates its run time. On host backends it simply runs the sequence.
//
// A graph bakes in every launch's arguments: pointers, row counts, strides. So the recorded
// work must read its per-step inputs (tokens, slots, positions) from device buffers at fixed
// addresses that the caller refills before Run, must write to fixed buffers, and must depend
// on nothing else that changes between steps; call Invalidate when any of that changes
// (buffers reallocated, weights reloaded). Not thread-safe: owned by the engine thread.
#pragma once

#include <cstdint>
#include <unordered_map>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "kernels/backend.h"

namespace slotserve::kernels {

class StepGraphCache {
 public:
  explicit StepGraphCache(Backend backend) : backend_(backend) {}
  ~StepGraphCache();
  StepGraphCache(const StepGraphCache&) = delete;
  StepGraphCache& operator=(const StepGraphCache&) = delete;

  // Host backends: calls record(stream). cuda: replays the graph for `key` on `stream`,
  // capturing record(stream) into it first if there is none (record is then called exactly
  // once per key; while it is captured its work does not run, the replay that follows runs
  // it). `stream` must come from DeviceStream::Create (capture refuses the null stream).
  // A capture that fails inside `record` (a CUDA call not allowed while capturing) does not
  // end the process: the failure is logged once, kept in capture_failure(), and from then on
  // every Run calls record(stream) directly, without graphs (slower at small batches, right).
  // Errors of the caller's own making (the null stream) are returned, as before.
  absl::Status Run(int64_t key, Stream stream, absl::FunctionRef<void(Stream)> record);

  // OK, or why graphs were given up on (they stay off until Invalidate).
  const absl::Status& capture_failure() const { return capture_failure_; }

  // Drops every graph and any capture failure; the next Run of each key captures again.
  void Invalidate();

  bool Contains(int64_t key) const { return graphs_.count(key) != 0; }
  std::size_t size() const { return graphs_.size(); }

 private:
  Backend backend_;
  std::unordered_map<int64_t, void*> graphs_;  // key -> instantiated graph (cudaGraphExec_t)
  absl::Status capture_failure_;
};

}  // namespace slotserve::kernels
