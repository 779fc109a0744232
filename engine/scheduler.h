// The serving engine (docs/ARCHITECTURE.md "Floors"; docs/ARCHITECTURE.md "A request's path"): one
// engine thread owns the model, the state arena and the slot pool, and runs iteration-level
// continuous batching. Each step:
//   1. takes in cancellations, drops requests whose deadline passed, admits queued requests
//      while a slot is free (the slot is reset on admission);
//   2. decodes one token for every request past its prompt (one LanguageModel::StepAndSample:
//      every token is selected by the one selection op, kernels/sampling.h, where the model's
//      logits are, whatever else is in the batch);
//   3. feeds prompt chunks (<= prefill_chunk tokens each) of admitted requests in admission
//      order while the token budget (token_budget minus the decode batch) lasts; at least one
//      chunk per step is always run so prompts never starve. Beside a decode batch the prompt
//      tokens are also capped by max_step_latency, costed online (step_latency_budget.h). A request
//      whose prompt is fully absorbed selects its first token with the same op (PrefillAndSample)
//      and decodes from the next step on.
// Requests join and leave between steps. Idle, the thread sleeps on a condition variable.
// Every public method is thread-safe. Inside: request_queue.h (what other threads touch),
// step_planner.h (the rules of 1-3 as pure functions), step_runner.h (a step's model calls).
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "engine/engine_observer.h"
#include "engine/generation_events.h"
#include "engine/generation_request.h"
#include "engine/request_preparation.h"
#include "engine/sampling_defaults.h"
#include "engine/session_store.h"
#include "engine/step_latency_budget.h"
#include "engine/tokenizer.h"
#include "models/language_model.h"
#include "models/model_config.h"

namespace slotserve::engine {

struct SchedulerOptions {
  int max_slots = 64;       // states in the arena = most requests running at once
  int max_queued = 256;     // accepted but waiting for a slot; beyond: RESOURCE_EXHAUSTED
  int token_budget = 512;   // tokens (decode + prefill) one step aims to stay within
  int prefill_chunk = 256;  // most prompt tokens of one request fed in one model call
  // How long a step that decodes may take (step_latency_budget.h): prompt tokens beside a
  // decode batch are cut so the step stays within it, costed by the measured per-token prefill
  // time. Auto (the default) = 3x the running median decode step.
  StepLatencyTarget max_step_latency;
  int default_max_new_tokens = 128;  // used when StoppingOptions::max_new_tokens is 0
  int max_new_tokens_limit = 4096;   // larger max_new_tokens are refused
  int max_prompt_tokens = 8192;      // longer prompts are refused
  // The served longest context (prompt + generated tokens) when below the model's own
  // (LanguageModel::max_positions): for a model with no limit of its own (fla's), a Hugging
  // Face directory's max_position_embeddings. 0 = the model's.
  int64_t max_context_tokens = 0;
  int max_stop_sequences = 16;
  int max_stop_sequence_bytes = 256;
  int max_top_logprobs = 20;
  int max_n = 16;
  // Widest beam search (BeamOptions::width) one request may ask for; capped by max_slots.
  int max_beam_width = 8;
  // Encoder–decoder models: cross memories in the arena, i.e. most requests holding a source
  // at once (a request's beams and choices share one); 0 = one per slot. Fewer than max_slots
  // trades concurrent sources for memory when requests fork (beams, n > 1).
  int max_cross_memories = 0;
  // Sessions (docs/ARCHITECTURE.md "Request state", session_store.h): kept states live this long
  // since last used, and take at most this many bytes (least recently used first out).
  absl::Duration session_ttl = absl::Minutes(30);
  int64_t session_memory_bytes = int64_t{1} << 30;
  // Where sessions live: null = the embedded in-memory store (in_memory_session_store.h, with
  // session_ttl and session_memory_bytes); otherwise a store the caller made, e.g. one shared
  // by several replicas (server/redis_session_store.h).
  std::shared_ptr<SessionStore> session_store;
  // Prefix states (docs/ARCHITECTURE.md "Request state", prefix_cache.h): prompts are checkpointed
  // every prefix_block tokens into a host-memory LRU of at most prefix_cache_bytes, and a prompt
  // starting with cached blocks is restored from the longest one. Prefill chunks then never cross a
  // block boundary (step_planner.h), so a hit gives bitwise the logits of a miss. 0 in either =
  // off.
  int prefix_block = 64;
  int64_t prefix_cache_bytes = int64_t{256} << 20;
  // Ids that end a request as eos beside the model's eos_id and the tokenizer's eos
  // (eos_ids.h): generation_config.json's eos_token_id list. Each must be in the vocabulary.
  std::vector<int32_t> extra_eos_ids;
  // What a request's unset sampling fields become (sampling_defaults.h). The front ends apply
  // them as they parse; the engine only carries them for them and ModelInfo.
  SamplingDefaults sampling_defaults;

  // INVALID_ARGUMENT naming the first bad field ("max_slots must be > 0, got 0").
  absl::Status Validate() const;
};

class Scheduler {
 public:
  // Allocates max_slots states from the model. `tokenizer` may be null (token-id requests
  // only: stop sequences are then refused and chunks carry no text); when given it must
  // outlive the scheduler and have no more pieces than the model's vocabulary. `observer`
  // may be null; when given it must outlive the scheduler. The engine thread starts with
  // Start().
  static absl::StatusOr<std::unique_ptr<Scheduler>> Create(
      std::unique_ptr<models::LanguageModel> model, const Tokenizer* tokenizer,
      const SchedulerOptions& options, EngineObserver* observer = nullptr);

  // Stop()s.
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Starts the engine thread. Requests submitted before wait in the queue.
  void Start();

  // Validates and enqueues a request. Errors, returned at once (the sink is then never called):
  //   INVALID_ARGUMENT    a bad field; the message names it, says what was expected and what
  //                       was given ("sampling.temperature must be >= 0, got -1")
  //   FAILED_PRECONDITION stop sequences without a tokenizer
  //   DEADLINE_EXCEEDED   the deadline has already passed
  //   RESOURCE_EXHAUSTED  max_queued requests are already waiting
  //   NOT_FOUND           session.handle is unknown or expired
  //   FAILED_PRECONDITION session.handle is held by another request
  //   UNAVAILABLE         draining or stopped
  // On success the sink gets the request's events (generation_events.h) on the engine thread.
  absl::StatusOr<RequestId> Submit(GenerationRequest request, std::shared_ptr<GenerationSink> sink);
  // Submits several requests as one: all are queued or none (the first refusal, or
  // RESOURCE_EXHAUSTED when the queue cannot take them all). A batch of prompts answers so.
  // Every request is checked before the queue is asked, so a bad one is refused as bad even
  // when the queue is full. `refused` (may be null) receives, on error, the index of the
  // submission refused, or submissions.size() when the queue refused the whole batch.
  absl::StatusOr<std::vector<RequestId>> SubmitAll(std::vector<Submission> submissions,
                                                   size_t* refused = nullptr);

  // Ends a queued or running request with CANCELLED at the next step (its slot is returned
  // then). Returns false when the id is unknown or the request has already finished.
  bool Cancel(RequestId id);

  // Refuses new requests (UNAVAILABLE) from now on; queued and running ones still finish.
  void BeginDrain();
  bool draining() const;
  // Blocks until no request is queued or running, or until `deadline`. True when idle.
  bool WaitIdle(absl::Time deadline);
  // Refuses new requests, ends every queued and running one with UNAVAILABLE, joins the
  // engine thread. Idempotent: a later (or concurrent) call returns at once.
  void Stop();

  SchedulerStats stats() const;
  // The kept sessions (thread-safe): export / import go through it.
  SessionStore& sessions();
  const SchedulerOptions& options() const;
  // The model's description; immutable, safe from any thread.
  const models::ModelConfig& model_config() const;
  // The longest context a request may reach: the model's, or max_context_tokens below it.
  int64_t max_context() const;
  // Every id that ends a request as eos (eos_ids.h), sorted; empty when there is none.
  const std::vector<int32_t>& eos_ids() const;
  int64_t state_bytes_per_request() const;
  // Encoder–decoder models' shape (source limit, state parts); null for decoder-only ones.
  const models::Seq2seqShape* seq2seq() const;
  // The model's fla description when it is an fla checkpoint, else null.
  const models::FlaConfig* fla() const;
  kernels::Backend backend() const;
  const Tokenizer* tokenizer() const;

 private:
  class Impl;
  explicit Scheduler(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace slotserve::engine
