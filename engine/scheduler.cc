#include "engine/scheduler.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <limits>
#include <mutex>
#include <optional>
#include <random>
#include <span>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "kernels/counter_rng.h"
#include "engine/active_request.h"
#include "engine/request_validation.h"
#include "engine/slot_pool.h"

namespace slotserve::engine {

using kernels::MixBits;
namespace {

EngineObserver& NoObserver() {
  static EngineObserver* observer = new EngineObserver();
  return *observer;
}

absl::Status Positive(const char* field, int value) {
  if (value > 0) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(field, " must be > 0, got ", value));
}

}  // namespace

absl::Status SchedulerOptions::Validate() const {
  for (const auto& [field, value] :
       {std::pair{"max_slots", max_slots}, std::pair{"max_queued", max_queued},
        std::pair{"token_budget", token_budget}, std::pair{"prefill_chunk", prefill_chunk},
        std::pair{"default_max_new_tokens", default_max_new_tokens},
        std::pair{"max_new_tokens_limit", max_new_tokens_limit},
        std::pair{"max_prompt_tokens", max_prompt_tokens},
        std::pair{"max_stop_sequence_bytes", max_stop_sequence_bytes}}) {
    if (absl::Status s = Positive(field, value); !s.ok()) return s;
  }
  if (default_max_new_tokens > max_new_tokens_limit) {
    return absl::InvalidArgumentError(
        absl::StrCat("default_max_new_tokens must be <= max_new_tokens_limit (",
                     max_new_tokens_limit, "), got ", default_max_new_tokens));
  }
  if (max_stop_sequences < 0 || max_top_logprobs < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_stop_sequences and max_top_logprobs must be >= 0, got ",
                     max_stop_sequences, " and ", max_top_logprobs));
  }
  return absl::OkStatus();
}

class Scheduler::Impl {
 public:
  Impl(std::unique_ptr<models::LanguageModel> model, const Tokenizer* tokenizer,
       const SchedulerOptions& options, EngineObserver* observer,
       std::unique_ptr<models::StateArena> arena)
      : model_(std::move(model)),
        tokenizer_(tokenizer),
        options_(options),
        observer_(observer != nullptr ? *observer : NoObserver()),
        arena_(std::move(arena)),
        pool_(arena_.get()),
        sample_on_device_(SamplesOnDevice(options.device_sampling, model_->backend())),
        seed_base_(RandomSeedBase()) {
    const models::ModelConfig& config = model_->config();
    limits_.vocab_size = config.vocab_size;
    limits_.max_positions = model_->max_positions();
    limits_.max_prompt_tokens = options.max_prompt_tokens;
    limits_.default_max_new_tokens = options.default_max_new_tokens;
    limits_.max_new_tokens_limit = options.max_new_tokens_limit;
    limits_.max_stop_sequences = options.max_stop_sequences;
    limits_.max_stop_sequence_bytes = options.max_stop_sequence_bytes;
    limits_.max_top_logprobs = options.max_top_logprobs;
    limits_.has_tokenizer = tokenizer != nullptr;
  }

  ~Impl() { Stop(); }

  void Start() {
    std::lock_guard lock(mu_);
    if (started_ || stopping_) return;
    started_ = true;
    thread_ = std::thread([this] { Run(); });
  }

  absl::StatusOr<RequestId> Submit(GenerationRequest request,
                                   std::shared_ptr<GenerationSink> sink) {
    if (sink == nullptr) return absl::InvalidArgumentError("sink must not be null");
    if (absl::Status s = ValidateGenerationRequest(request, limits_); !s.ok()) return s;
    const absl::Time now = absl::Now();
    if (request.deadline <= now) {
      return absl::DeadlineExceededError(absl::StrCat("the request's deadline passed ",
                                                      absl::FormatDuration(now - request.deadline),
                                                      " before it was submitted"));
    }
    StopLimits stop_limits;
    stop_limits.max_new_tokens = EffectiveMaxNewTokens(request.stopping, limits_);
    stop_limits.eos_id = model_->config().eos_id;
    stop_limits.max_positions = limits_.max_positions;

    std::lock_guard lock(mu_);
    if (stopping_) return absl::UnavailableError("the scheduler has stopped");
    if (draining_) return absl::UnavailableError("the server is draining; not accepting requests");
    if (static_cast<int>(queue_.size()) >= options_.max_queued) {
      return absl::ResourceExhaustedError(absl::StrCat("the request queue is full (",
                                                       options_.max_queued,
                                                       " waiting for a state slot); retry later"));
    }
    const RequestId id = next_id_++;
    const uint64_t seed = request.sampling.seed.value_or(MixBits(seed_base_ + id));
    // Priming the detokeniser walks the prompt once; prompts are bounded by
    // max_prompt_tokens, so this stays short even under the lock.
    queue_.push_back(std::make_unique<ActiveRequest>(id, std::move(request), std::move(sink), seed,
                                                     stop_limits, tokenizer_, now));
    live_.insert(id);
    work_cv_.notify_one();
    return id;
  }

  bool Cancel(RequestId id) {
    std::lock_guard lock(mu_);
    if (!live_.contains(id)) return false;
    cancels_.push_back(id);
    work_cv_.notify_one();
    return true;
  }

  void BeginDrain() {
    std::lock_guard lock(mu_);
    draining_ = true;
  }

  bool draining() const {
    std::lock_guard lock(mu_);
    return draining_ || stopping_;
  }

  bool WaitIdle(absl::Time deadline) {
    std::unique_lock lock(mu_);
    while (!live_.empty()) {
      const absl::Duration left = deadline - absl::Now();
      if (left <= absl::ZeroDuration()) return false;
      idle_cv_.wait_for(lock, absl::ToChronoNanoseconds(std::min(left, absl::Seconds(1))));
    }
    return true;
  }

  void Stop() {
    {
      std::lock_guard lock(mu_);
      if (stop_called_) return;
      stop_called_ = true;
      stopping_ = true;
      work_cv_.notify_one();
    }
    if (thread_.joinable()) {
      thread_.join();
    } else {
      FinishEverythingOnStop();  // never started: the queue ends on this thread
    }
  }

  SchedulerStats stats() const {
    std::lock_guard lock(mu_);
    return StatsLocked();
  }

  const SchedulerOptions& options() const { return options_; }
  const models::LanguageModel& model() const { return *model_; }
  const Tokenizer* tokenizer() const { return tokenizer_; }

 private:
  static uint64_t RandomSeedBase() {
    std::random_device device;
    return (static_cast<uint64_t>(device()) << 32) ^ device();
  }

  SchedulerStats StatsLocked() const {
    SchedulerStats stats;
    stats.queued = static_cast<int>(queue_.size());
    stats.running = static_cast<int>(live_.size()) - stats.queued;
    stats.slots_used = stats.running;
    stats.slots_total = options_.max_slots;
    return stats;
  }

  // The engine thread.
  void Run() {
    while (true) {
      std::vector<std::unique_ptr<ActiveRequest>> admitted;
      std::vector<std::pair<std::unique_ptr<ActiveRequest>, absl::Status>> dropped_from_queue;
      absl::flat_hash_set<RequestId> cancelled;
      {
        std::unique_lock lock(mu_);
        work_cv_.wait(lock, [&] {
          return stopping_ || !cancels_.empty() || !running_.empty() ||
                 (!queue_.empty() && pool_.free_count() > 0);
        });
        if (stopping_) break;
        cancelled.insert(cancels_.begin(), cancels_.end());
        cancels_.clear();
        const absl::Time now = absl::Now();
        for (auto it = queue_.begin(); it != queue_.end();) {
          if (cancelled.contains((*it)->id())) {
            dropped_from_queue.emplace_back(std::move(*it), CancelledStatus());
          } else if ((*it)->request().deadline <= now) {
            dropped_from_queue.emplace_back(std::move(*it), DeadlineStatus(**it, now));
          } else {
            ++it;
            continue;
          }
          it = queue_.erase(it);
        }
        while (!queue_.empty() && static_cast<int>(admitted.size()) < pool_.free_count()) {
          admitted.push_back(std::move(queue_.front()));
          queue_.pop_front();
        }
      }
      const absl::Time now = absl::Now();
      for (auto& [request, status] : dropped_from_queue) {
        Finish(*request, FinishReason::kCancelled, std::move(status));
      }
      for (auto& request : running_) {
        if (cancelled.contains(request->id())) {
          Finish(*request, FinishReason::kCancelled, CancelledStatus());
        } else if (request->request().deadline <= now) {
          Finish(*request, FinishReason::kCancelled, DeadlineStatus(*request, now));
        }
      }
      Admit(std::move(admitted), now);
      const int decoded = DecodeStep();
      PrefillChunks(options_.token_budget - decoded);
      std::erase_if(running_, [](const auto& request) { return request->finished; });
      observer_.OnStats(stats());
    }
    FinishEverythingOnStop();
  }

  void Admit(std::vector<std::unique_ptr<ActiveRequest>> admitted, absl::Time now) {
    for (auto& request : admitted) {
      absl::StatusOr<int> slot = pool_.Acquire();
      if (!slot.ok()) {
        Finish(*request, FinishReason::kCancelled,
               absl::InternalError(
                   absl::StrCat("could not set up a state slot: ", slot.status().message())));
        continue;
      }
      request->slot = *slot;
      request->admitted = now;
      observer_.OnRequestAdmitted(now - request->submitted);
      running_.push_back(std::move(request));
    }
  }

  // One token for every request past its prompt, in one model call. Returns the batch size.
  int DecodeStep() {
    std::vector<ActiveRequest*> batch;
    std::vector<int32_t> slots;
    std::vector<int32_t> tokens;
    for (auto& request : running_) {
      if (request->finished || !request->next_input()) continue;
      batch.push_back(request.get());
      slots.push_back(request->slot);
      tokens.push_back(*request->next_input());
    }
    if (batch.empty()) return 0;
    if (sample_on_device_ && AllSampleOnDevice(batch)) {
      // Only the ids cross to the host.
      decode_tokens_.assign(batch.size(), -1);
      RunDecodeCall(
          batch,
          [&] {
            return model_->StepAndSample(*arena_, slots, tokens, decode_sampling_, decode_tokens_);
          },
          [&](size_t i, absl::Time end) {
            HandleOutcome(*batch[i], batch[i]->AcceptSampled(decode_tokens_[i]), end);
          });
    } else {
      const size_t vocab = static_cast<size_t>(model_->config().vocab_size);
      decode_logits_.resize(batch.size() * vocab);
      RunDecodeCall(
          batch, [&] { return model_->Step(*arena_, slots, tokens, decode_logits_); },
          [&](size_t i, absl::Time end) {
            HandleLogits(*batch[i], std::span<float>(decode_logits_).subspan(i * vocab, vocab),
                         end);
          });
    }
    return static_cast<int>(batch.size());
  }

  // Whether every row's token may be sampled on the device; when so, their options are in
  // decode_sampling_.
  bool AllSampleOnDevice(const std::vector<ActiveRequest*>& batch) {
    decode_sampling_.clear();
    for (const ActiveRequest* request : batch) {
      std::optional<models::TokenSampling> sampling = request->DeviceSampling();
      if (!sampling) return false;
      decode_sampling_.push_back(*sampling);
    }
    return true;
  }

  // Runs one decode model call for `batch` and reports its duration, then hands row i to
  // take(i, end), or ends every row with the call's error.
  template <typename Call, typename Take>
  void RunDecodeCall(const std::vector<ActiveRequest*>& batch, Call call, Take take) {
    const absl::Time start = absl::Now();
    const absl::Status status = call();
    const absl::Time end = absl::Now();
    observer_.OnStep(StepPhase::kDecode, static_cast<int>(batch.size()), end - start);
    for (size_t i = 0; i < batch.size(); ++i) {
      if (!status.ok()) {
        Finish(*batch[i], FinishReason::kCancelled, ModelError("decode step", status));
        continue;
      }
      take(i, end);
    }
  }

  // Prompt chunks in admission order while the budget lasts (always at least one chunk).
  void PrefillChunks(int budget) {
    const size_t vocab = static_cast<size_t>(model_->config().vocab_size);
    prefill_logits_.resize(vocab);
    bool ran_a_chunk = false;
    for (auto& request : running_) {
      if (request->finished || request->prompt_done()) continue;
      const std::span<const int32_t> left = request->prompt_left();
      size_t chunk = std::min<size_t>(left.size(), options_.prefill_chunk);
      if (budget < static_cast<int>(chunk)) {
        if (budget > 0) {
          chunk = budget;
        } else if (ran_a_chunk) {
          break;
        }
      }
      const absl::Time start = absl::Now();
      const absl::Status status =
          model_->Prefill(*arena_, request->slot, left.first(chunk),
                          models::LogitsWanted::kLastToken, prefill_logits_);
      const absl::Time end = absl::Now();
      observer_.OnStep(StepPhase::kPrefill, static_cast<int>(chunk), end - start);
      ran_a_chunk = true;
      budget -= static_cast<int>(chunk);
      if (!status.ok()) {
        Finish(*request, FinishReason::kCancelled, ModelError("prefill", status));
        continue;
      }
      request->PromptFed(chunk);
      if (request->prompt_done()) {
        request->prefill_done = end;
        HandleLogits(*request, prefill_logits_, end);
      }
    }
  }

  // Samples a request's next token from its logits on the host, then as HandleOutcome.
  void HandleLogits(ActiveRequest& request, std::span<float> logits, absl::Time now) {
    HandleOutcome(request, request.SampleNext(logits), now);
  }

  // Streams a request's new token and ends the request if due.
  void HandleOutcome(ActiveRequest& request, const ActiveRequest::TokenOutcome& outcome,
                     absl::Time now) {
    if (!request.first_token) {
      request.first_token = now;
      observer_.OnFirstToken(now - request.submitted);
    } else {
      observer_.OnInterTokenLatency(now - *request.last_token);
    }
    request.last_token = now;
    request.sink().OnTokens(outcome.chunk);
    if (outcome.finish) Finish(request, *outcome.finish, absl::OkStatus());
  }

  // Every ending goes through here: the slot goes back, the sink hears once. The request
  // leaves the books (slot, live set, gauges, counters) before its sink hears the end, so a
  // client that reads its last message and at once asks GetModelInfo or scrapes the metrics
  // sees its slot free (issue 15, defect 1).
  void Finish(ActiveRequest& request, FinishReason reason, absl::Status status) {
    if (request.finished) return;
    request.finished = true;
    if (request.slot >= 0) {
      pool_.Release(request.slot).IgnoreError();  // held by construction
      request.slot = -1;
    }
    if (!status.ok()) {
      // Text held back for a possible stop sequence is not lost on a cut-off request.
      TokenChunk tail;
      tail.text = request.FinishText();
      if (!tail.text.empty()) request.sink().OnTokens(tail);
    }
    const Finished finished = request.MakeFinished(reason, std::move(status), absl::Now());
    SchedulerStats after;
    {
      std::lock_guard lock(mu_);
      live_.erase(request.id());
      after = StatsLocked();
    }
    observer_.OnRequestFinished(finished);
    observer_.OnStats(after);
    request.sink().OnFinished(finished);
    std::lock_guard lock(mu_);
    if (live_.empty()) idle_cv_.notify_all();
  }

  void FinishEverythingOnStop() {
    std::deque<std::unique_ptr<ActiveRequest>> queued;
    {
      std::lock_guard lock(mu_);
      queued.swap(queue_);
    }
    const absl::Status shutdown =
        absl::UnavailableError("the server shut down before the request finished");
    for (auto& request : running_) Finish(*request, FinishReason::kCancelled, shutdown);
    running_.clear();
    for (auto& request : queued) Finish(*request, FinishReason::kCancelled, shutdown);
  }

  static absl::Status CancelledStatus() {
    return absl::CancelledError("the request was cancelled");
  }

  static absl::Status DeadlineStatus(const ActiveRequest& request, absl::Time now) {
    return absl::DeadlineExceededError(absl::StrCat(
        "the request's deadline passed after ", request.generated(), " generated tokens (",
        absl::FormatDuration(now - request.submitted), " after it arrived)"));
  }

  static absl::Status ModelError(const char* what, const absl::Status& status) {
    return absl::Status(
        status.code() == absl::StatusCode::kOk ? absl::StatusCode::kInternal : status.code(),
        absl::StrCat("model ", what, " failed: ", status.message()));
  }

  // Immutable after construction.
  const std::unique_ptr<models::LanguageModel> model_;
  const Tokenizer* const tokenizer_;
  const SchedulerOptions options_;
  EngineObserver& observer_;
  RequestLimits limits_;

  // Engine thread only.
  std::unique_ptr<models::StateArena> arena_;
  SlotPool pool_;
  std::vector<std::unique_ptr<ActiveRequest>> running_;  // admission order
  std::vector<float> decode_logits_;
  const bool sample_on_device_;  // options_.device_sampling resolved for the model's backend
  std::vector<models::TokenSampling> decode_sampling_;
  std::vector<int32_t> decode_tokens_;
  std::vector<float> prefill_logits_;

  // Shared, guarded by mu_.
  mutable std::mutex mu_;
  std::condition_variable work_cv_;
  std::condition_variable idle_cv_;
  std::deque<std::unique_ptr<ActiveRequest>> queue_;
  std::vector<RequestId> cancels_;
  absl::flat_hash_set<RequestId> live_;  // accepted and not yet finished
  RequestId next_id_ = 1;
  const uint64_t seed_base_;
  bool started_ = false;
  bool draining_ = false;
  bool stopping_ = false;
  bool stop_called_ = false;
  std::thread thread_;
};

absl::StatusOr<std::unique_ptr<Scheduler>> Scheduler::Create(
    std::unique_ptr<models::LanguageModel> model, const Tokenizer* tokenizer,
    const SchedulerOptions& options, EngineObserver* observer) {
  if (model == nullptr) return absl::InvalidArgumentError("model must not be null");
  if (absl::Status s = options.Validate(); !s.ok()) return s;
  const int vocab_size = model->config().vocab_size;
  if (tokenizer != nullptr && tokenizer->piece_count() > vocab_size) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tokenizer.model has ", tokenizer->piece_count(), " pieces but the model's vocab_size is ",
        vocab_size, "; they must match (pieces <= vocab)"));
  }
  absl::StatusOr<std::unique_ptr<models::StateArena>> arena =
      model->AllocateStates(options.max_slots);
  if (!arena.ok()) {
    return absl::Status(
        arena.status().code(),
        absl::StrCat("allocating ", options.max_slots, " state slots of ",
                     model->state_bytes_per_request(), " bytes: ", arena.status().message()));
  }
  auto impl =
      std::make_unique<Impl>(std::move(model), tokenizer, options, observer, std::move(*arena));
  return std::unique_ptr<Scheduler>(new Scheduler(std::move(impl)));
}

Scheduler::Scheduler(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Scheduler::~Scheduler() = default;

void Scheduler::Start() { impl_->Start(); }
absl::StatusOr<RequestId> Scheduler::Submit(GenerationRequest request,
                                            std::shared_ptr<GenerationSink> sink) {
  return impl_->Submit(std::move(request), std::move(sink));
}
bool Scheduler::Cancel(RequestId id) { return impl_->Cancel(id); }
void Scheduler::BeginDrain() { impl_->BeginDrain(); }
bool Scheduler::draining() const { return impl_->draining(); }
bool Scheduler::WaitIdle(absl::Time deadline) { return impl_->WaitIdle(deadline); }
void Scheduler::Stop() { impl_->Stop(); }
SchedulerStats Scheduler::stats() const { return impl_->stats(); }
const SchedulerOptions& Scheduler::options() const { return impl_->options(); }
const models::ModelConfig& Scheduler::model_config() const { return impl_->model().config(); }
int64_t Scheduler::state_bytes_per_request() const {
  return impl_->model().state_bytes_per_request();
}
kernels::Backend Scheduler::backend() const { return impl_->model().backend(); }
const Tokenizer* Scheduler::tokenizer() const { return impl_->tokenizer(); }

}  // namespace slotserve::engine
