#include "engine/scheduler.h"

#include <algorithm>
#include <deque>
#include <mutex>
#include <optional>
#include <random>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "engine/active_request.h"
#include "engine/ending_status.h"
#include "engine/eos_ids.h"
#include "engine/in_memory_session_store.h"
#include "engine/prefix_cache.h"
#include "engine/request_preparation.h"
#include "engine/request_queue.h"
#include "engine/request_start.h"
#include "engine/request_validation.h"
#include "engine/session_end.h"
#include "engine/session_writer.h"
#include "engine/slot_pool.h"
#include "engine/step_planner.h"
#include "engine/step_runner.h"
#include "kernels/counter_rng.h"

namespace slotserve::engine {

using kernels::MixBits;
namespace {

// The session writer's bounds (session_writer.h): final states that may wait for the store (at
// least this many, else 4 per slot), and how long one may wait before it is given up.
constexpr int kMinPendingSessionStates = 64;
constexpr absl::Duration kSessionWriteWaitLimit = absl::Seconds(10);

EngineObserver& NoObserver() {
  static EngineObserver* observer = new EngineObserver();
  return *observer;
}

}  // namespace

// Owns the engine thread: each step it takes work from the queue, fills the admitted requests'
// slots and forks (request_start.h), plans the step (step_planner.h), has the runner execute
// it (step_runner.h), and keeps the books of every ending (Finish, with its session side in
// session_end.h).
class Scheduler::Impl final : private RequestFinisher {
 public:
  Impl(std::unique_ptr<models::LanguageModel> model, const Tokenizer* tokenizer,
       const SchedulerOptions& options, EngineObserver* observer,
       std::unique_ptr<models::StateArena> arena, std::vector<int32_t> eos_ids)
      : model_(std::move(model)),
        tokenizer_(tokenizer),
        eos_ids_(std::move(eos_ids)),
        options_(options),
        observer_(observer != nullptr ? *observer : NoObserver()),
        limits_(MakeRequestLimits(*model_, tokenizer, options)),
        seed_base_(RandomSeedBase()),
        arena_(std::move(arena)),
        pool_(arena_.get()),
        prefix_cache_(MakePrefixCache(options)),
        runner_(*model_, *arena_, observer_, *this, prefix_cache_.get()),
        starts_(*model_, *arena_, observer_, *this, prefix_cache_.get()),
        queue_(options.max_queued, options.max_slots),
        sessions_(
            options.session_store != nullptr
                ? options.session_store
                : std::make_shared<InMemorySessionStore>(SessionStoreOptions{
                      .ttl = options.session_ttl, .max_bytes = options.session_memory_bytes})) {}

  ~Impl() override { Stop(); }

  void Start() {
    std::lock_guard lock(lifecycle_mu_);
    if (started_ || queue_.shut_down()) return;
    started_ = true;
    thread_ = std::thread([this] { Run(); });
  }

  absl::StatusOr<RequestId> Submit(GenerationRequest request,
                                   std::shared_ptr<GenerationSink> sink) {
    std::vector<Submission> one;
    one.push_back({std::move(request), std::move(sink)});
    SLOTSERVE_ASSIGN_OR_RETURN(const std::vector<RequestId> ids,
                               SubmitAll(std::move(one), nullptr));
    return ids.front();
  }

  absl::StatusOr<std::vector<RequestId>> SubmitAll(std::vector<Submission> submissions,
                                                   size_t* refused) {
    const absl::Time now = absl::Now();
    std::vector<PreparedRequest> prepared;
    // A refusal of any request ends the session holds of those prepared before it.
    auto release_sessions = [&] {
      for (const PreparedRequest& ready : prepared) {
        if (ready.session_state) {
          sessions_->Release(ready.request.session.handle, std::nullopt, now).IgnoreError();
        }
      }
    };
    for (size_t index = 0; index < submissions.size(); ++index) {
      absl::StatusOr<PreparedRequest> ready = PrepareRequest(
          std::move(submissions[index]), now, limits_, *sessions_, model_->seq2seq());
      if (!ready.ok()) {
        release_sessions();
        if (refused != nullptr) *refused = index;
        return ready.status();
      }
      prepared.push_back(*std::move(ready));
    }
    // Priming the detokeniser walks the prompt once under the queue's lock; prompts are
    // bounded by max_prompt_tokens, so this stays short.
    absl::StatusOr<std::vector<RequestId>> ids =
        queue_.EnqueueAll(static_cast<int>(prepared.size()), [&](int index, RequestId id) {
          PreparedRequest& ready = prepared[index];
          StopLimits stop_limits;
          stop_limits.max_new_tokens = EffectiveMaxNewTokens(ready.request.stopping, limits_);
          stop_limits.eos_ids = eos_ids_;
          stop_limits.max_positions = limits_.max_positions;
          const uint64_t seed = ready.request.sampling.seed.value_or(MixBits(seed_base_ + id));
          auto active =
              std::make_unique<ActiveRequest>(id, std::move(ready.request), std::move(ready.sink),
                                              seed, stop_limits, tokenizer_, now);
          if (ready.session_state) active->AttachSessionState(std::move(*ready.session_state));
          return active;
        });
    if (!ids.ok()) {
      release_sessions();
      if (refused != nullptr) *refused = submissions.size();
    }
    return ids;
  }

  bool Cancel(RequestId id) { return queue_.Cancel(id); }
  void BeginDrain() { queue_.BeginDrain(); }
  bool draining() const { return queue_.draining(); }
  bool WaitIdle(absl::Time deadline) { return queue_.WaitIdle(deadline); }

  void Stop() {
    std::thread engine;
    {
      std::lock_guard lock(lifecycle_mu_);
      if (!queue_.ShutDown()) return;
      engine = std::move(thread_);
    }
    if (engine.joinable()) {
      engine.join();
    } else {
      FinishEverythingOnStop();  // never started: the queue ends on this thread
    }
    session_writer_.Close();  // the ends of the last requests reach their sinks
  }

  SchedulerStats stats() const { return queue_.stats(); }
  SessionStore& sessions() { return *sessions_; }
  const SchedulerOptions& options() const { return options_; }
  const models::LanguageModel& model() const { return *model_; }
  const Tokenizer* tokenizer() const { return tokenizer_; }
  const std::vector<int32_t>& eos_ids() const { return eos_ids_; }
  int64_t max_context() const { return limits_.max_positions; }

 private:
  static RequestLimits MakeRequestLimits(const models::LanguageModel& model,
                                         const Tokenizer* tokenizer,
                                         const SchedulerOptions& options) {
    RequestLimits limits;
    limits.vocab_size = model.config().vocab_size;
    limits.max_positions =
        options.max_context_tokens > 0
            ? std::min<int64_t>(model.max_positions(), options.max_context_tokens)
            : model.max_positions();
    limits.max_prompt_tokens = options.max_prompt_tokens;
    limits.default_max_new_tokens = options.default_max_new_tokens;
    limits.max_new_tokens_limit = options.max_new_tokens_limit;
    limits.max_stop_sequences = options.max_stop_sequences;
    limits.max_stop_sequence_bytes = options.max_stop_sequence_bytes;
    limits.max_top_logprobs = options.max_top_logprobs;
    limits.max_n = std::min(options.max_n, options.max_slots);
    limits.max_beam_width = std::min(options.max_beam_width, options.max_slots);
    limits.has_tokenizer = tokenizer != nullptr;
    if (const models::Seq2seqShape* seq2seq = model.seq2seq(); seq2seq != nullptr) {
      limits.seq2seq = true;
      limits.max_source_tokens = seq2seq->max_source_tokens;
    }
    return limits;
  }

  // How many of the queue's head requests join now: their slots, and for a seq2seq model their
  // one cross memory each, must be free.
  int AdmissionCount(std::vector<QueuedRequestView>& head) const {
    // A model whose arena keeps no shared blocks (decoder-only) has no cross memory to run out of.
    if (model_->seq2seq() == nullptr || arena_->shared_block_count() == 0) {
      return PlanAdmission(pool_.free_count(), head);
    }
    for (QueuedRequestView& queued : head) queued.cross_memories_needed = 1;
    return PlanAdmission(pool_.free_count(), head, arena_->free_shared_blocks());
  }

  static std::unique_ptr<PrefixCache> MakePrefixCache(const SchedulerOptions& options) {
    if (options.prefix_block <= 0 || options.prefix_cache_bytes <= 0) return nullptr;
    return std::make_unique<PrefixCache>(options.prefix_block, options.prefix_cache_bytes);
  }

  static uint64_t RandomSeedBase() {
    std::random_device device;
    return (static_cast<uint64_t>(device()) << 32) ^ device();
  }

  // The engine thread: take work in -> end what left -> admit -> plan -> run.
  void Run() {
    // Admission counts the slots free before this step's cancellations return theirs, so a
    // slot freed now is handed out from the next step on.
    while (std::optional<RequestQueue::Intake> intake =
               queue_.WaitForWork(!running_.empty(), pool_.free_count())) {
      const absl::Time now = absl::Now();
      for (auto& [request, status] : intake->dropped) {
        Finish(*request, FinishReason::kCancelled, std::move(status));
      }
      // A passed deadline wins over a cancel: gRPC cancels a call whose deadline passed, and
      // that cancel may arrive before this check sees the deadline.
      for (auto& request : running_) {
        if (request->request().deadline <= now) {
          Finish(*request, FinishReason::kCancelled, DeadlineStatus(*request, now));
        } else if (intake->cancelled.contains(request->id())) {
          Finish(*request, FinishReason::kCancelled, CancelledStatus());
        }
      }
      std::erase_if(running_, [](const auto& request) { return request->finished(); });
      Admit(queue_.PopFront(AdmissionCount(intake->head)), now);
      starts_.ForkReadyParents(running_);
      std::erase_if(running_, [](const auto& request) { return request->finished(); });
      StepLimits limits = step_limits_;
      limits.prefill_cap = PrefillTokenCap(options_.max_step_latency, runner_.costs());
      runner_.Run(PlanStep(RunningViews(), limits), running_);
      std::erase_if(running_, [](const auto& request) { return request->finished(); });
      ReportStats([this] { return stats(); });
    }
    FinishEverythingOnStop();
  }

  // Gives each admitted request its slots (PlanAdmission counted them: n for a fork, whose
  // choices 1..n-1 join here and wait for the parent's state, RequestStart::ForkReadyParents; the
  // width for a beam search, which prefills in the first and holds the rest for its hypotheses).
  void Admit(std::vector<std::unique_ptr<ActiveRequest>> admitted, absl::Time now) {
    for (auto& request : admitted) {
      std::vector<int> slots;
      absl::Status status;
      while (status.ok() && static_cast<int64_t>(slots.size()) < SlotsNeeded(request->request())) {
        absl::StatusOr<int> slot = pool_.Acquire();
        status = slot.status();
        if (slot.ok()) slots.push_back(*slot);
      }
      if (!status.ok()) {
        for (int slot : slots) pool_.Release(slot).IgnoreError();
        Finish(
            *request, FinishReason::kCancelled,
            absl::InternalError(absl::StrCat("could not set up a state slot: ", status.message())));
        continue;
      }
      request->Admit(slots[0], now);
      if (!starts_.FillSlot(*request)) {
        for (size_t i = 1; i < slots.size(); ++i) pool_.Release(slots[i]).IgnoreError();
        continue;
      }
      observer_.OnRequestAdmitted(now - request->submitted());
      if (request->request().beam.enabled()) {
        request->HoldBeamSlots(std::vector<int>(slots.begin() + 1, slots.end()));
        running_.push_back(std::move(request));
        continue;
      }
      if (slots.size() > 1) choices_left_[request->id()] = static_cast<int>(slots.size());
      for (size_t i = 1; i < slots.size(); ++i) {
        std::unique_ptr<ActiveRequest> choice = request->MakeChoice(static_cast<int>(i));
        choice->Admit(slots[i], now);
        running_.push_back(std::move(choice));
      }
      running_.push_back(std::move(request));
    }
  }

  std::vector<RunningRequestView> RunningViews() const {
    std::vector<RunningRequestView> views;
    views.reserve(running_.size());
    for (const auto& request : running_) {
      views.push_back({.decoding = request->decoding(),
                       .decode_rows = request->decode_rows(),
                       .prompt_left = request->prompt_feedable(),
                       .prompt_fed = static_cast<int64_t>(request->prompt_fed())});
    }
    return views;
  }

  // Every ending goes through here: the slot goes back, the sink hears once. The request
  // leaves the books (slot, live set, gauges, counters) before its sink hears the end, so a
  // client that reads its last message and at once asks GetModelInfo or scrapes the metrics
  // sees its slot free (issue 15, defect 1). An end with a session side (a state to keep, a
  // continued session to release) frees the slot at once, its state copied out, and the rest
  // (the books and the sink) follows on the session writer's thread once the store answered.
  void Finish(ActiveRequest& request, FinishReason reason, absl::Status status) override {
    if (request.finished()) return;
    const bool session_end =
        request.choice_index() == 0 && HasSessionEnd(request.request().session);
    std::optional<RequestState> final_state;
    if (session_end) final_state = FinalSessionState(request, status.ok(), *arena_);
    const std::vector<int> slots = request.MarkFinished();
    for (const int slot : slots) {
      pool_.Release(slot).IgnoreError();  // held by construction
    }
    if (!status.ok()) {
      // Text held back for a possible stop sequence is not lost on a cut-off request.
      TokenChunk tail;
      tail.choice_index = request.choice_index();
      tail.text = request.FinishText();
      if (!tail.text.empty()) request.sink().OnTokens(tail);
    }
    if (request.fork_stage() == ActiveRequest::ForkStage::kParent) {
      // Its waiting choices never get a state: they end with it (before it, so that the
      // parent's Finished is the request's last).
      for (const auto& child : running_) {
        if (child->id() == request.id() &&
            child->fork_stage() == ActiveRequest::ForkStage::kChild) {
          Finish(*child, reason, status);
        }
      }
    }
    Finished finished = request.MakeFinished(reason, std::move(status), absl::Now());
    bool last_choice = true;
    if (auto left = choices_left_.find(request.id()); left != choices_left_.end()) {
      last_choice = --left->second == 0;
      if (last_choice) choices_left_.erase(left);
    }
    finished.request_done = last_choice;  // else other choices still run: the request stays live
    if (!session_end) {
      Deliver(std::move(finished), request.sink(), request.id());
      return;
    }
    // Its slots are free from now on; the request stays live until its store answered.
    for (size_t i = 0; i < slots.size(); ++i) {
      ReportStats([&] { return queue_.SlotReturned(request.id()); });
    }
    session_writer_.Post(
        {.session = request.request().session,
         .state = std::move(final_state),
         .done = [this, finished = std::move(finished), sink = request.shared_sink(),
                  id = request.id()](absl::StatusOr<std::string> handle) mutable {
           if (handle.ok()) {
             finished.session_handle = *std::move(handle);
           } else if (finished.status.ok()) {
             // As MakeFinished ends any request that did not succeed.
             finished.status = handle.status();
             finished.reason = FinishReason::kCancelled;
             finished.hypotheses.clear();
           }
           observer_.OnSessionStats(sessions_->stats());
           Deliver(std::move(finished), *sink, id);
         }});
  }

  // The end of an ending's books: the request leaves the live set with its last choice, then
  // the observer hears, then the sink. On the engine thread, or on the session writer's.
  void Deliver(Finished finished, GenerationSink& sink, RequestId id) {
    {
      std::lock_guard lock(stats_report_mu_);
      const SchedulerStats after = finished.request_done ? queue_.Retire(id) : queue_.stats();
      observer_.OnRequestFinished(finished);
      observer_.OnStats(after);
    }
    sink.OnFinished(finished);
    queue_.NotifyIfIdle();
  }

  // Takes occupancy stats and reports them under one lock, so the engine thread's and the
  // session writer's reports reach the observer in the order they were taken.
  template <typename TakeStats>
  void ReportStats(TakeStats take) {
    std::lock_guard lock(stats_report_mu_);
    observer_.OnStats(take());
  }

  void ReleaseSlot(ActiveRequest& request, int slot) override {
    pool_.Release(slot).IgnoreError();  // held by construction
    ReportStats([&] { return queue_.SlotReturned(request.id()); });
  }

  void FinishEverythingOnStop() {
    std::deque<std::unique_ptr<ActiveRequest>> queued = queue_.TakeAll();
    for (auto& request : running_) Finish(*request, FinishReason::kCancelled, ShutdownStatus());
    running_.clear();
    for (auto& request : queued) Finish(*request, FinishReason::kCancelled, ShutdownStatus());
  }

  // Immutable after construction.
  const std::unique_ptr<models::LanguageModel> model_;
  const Tokenizer* const tokenizer_;
  const std::vector<int32_t> eos_ids_;  // eos_ids.h: the model's, the tokenizer's, extra_eos_ids
  const SchedulerOptions options_;
  EngineObserver& observer_;
  const RequestLimits limits_;
  const StepLimits step_limits_{
      .token_budget = options_.token_budget,
      .prefill_chunk = options_.prefill_chunk,
      .prefix_block = options_.prefix_cache_bytes > 0 ? options_.prefix_block : 0};
  const uint64_t seed_base_;

  // Engine thread only.
  std::unique_ptr<models::StateArena> arena_;
  SlotPool pool_;
  std::unique_ptr<PrefixCache> prefix_cache_;  // null: prefix states off
  StepRunner runner_;
  RequestStart starts_;
  std::vector<std::unique_ptr<ActiveRequest>> running_;  // admission order
  absl::flat_hash_map<RequestId, int> choices_left_;     // forks: choices not yet finished

  // Shared with the gRPC threads (each has its own lock).
  RequestQueue queue_;
  const std::shared_ptr<SessionStore> sessions_;
  std::mutex stats_report_mu_;  // ReportStats, Deliver

  // Start and Stop.
  std::mutex lifecycle_mu_;
  bool started_ = false;
  std::thread thread_;

  // Last, so that it is closed (its queue run) before anything its writes call into goes.
  SessionWriter session_writer_{*sessions_,
                                std::max(kMinPendingSessionStates, 4 * options_.max_slots),
                                kSessionWriteWaitLimit};
};

absl::StatusOr<std::unique_ptr<Scheduler>> Scheduler::Create(
    std::unique_ptr<models::LanguageModel> model, const Tokenizer* tokenizer,
    const SchedulerOptions& options, EngineObserver* observer) {
  if (model == nullptr) return absl::InvalidArgumentError("model must not be null");
  SLOTSERVE_RETURN_IF_ERROR(options.Validate());
  const int vocab_size = model->config().vocab_size;
  if (tokenizer != nullptr && tokenizer->piece_count() > vocab_size) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the tokenizer (tokenizer.model, or tokenizer.json without one) has ",
        tokenizer->piece_count(), " pieces but the model's vocab_size is ", vocab_size,
        ": it may have fewer ids than the model embeds (padded vocabularies), never more"));
  }
  SLOTSERVE_ASSIGN_OR_RETURN(
      std::vector<int32_t> eos_ids,
      EosIdSet(model->config().eos_id, tokenizer != nullptr ? tokenizer->eos_id() : -1,
               options.extra_eos_ids, vocab_size));
  absl::StatusOr<std::unique_ptr<models::StateArena>> arena =
      model->AllocateStatesSharingCrossMemories(options.max_slots, options.max_cross_memories > 0
                                                                       ? options.max_cross_memories
                                                                       : options.max_slots);
  if (!arena.ok()) {
    return absl::Status(
        arena.status().code(),
        absl::StrCat("allocating ", options.max_slots, " state slots of ",
                     model->state_bytes_per_request(), " bytes: ", arena.status().message()));
  }
  auto impl = std::make_unique<Impl>(std::move(model), tokenizer, options, observer,
                                     std::move(*arena), std::move(eos_ids));
  return std::unique_ptr<Scheduler>(new Scheduler(std::move(impl)));
}

Scheduler::Scheduler(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Scheduler::~Scheduler() = default;

void Scheduler::Start() { impl_->Start(); }
absl::StatusOr<RequestId> Scheduler::Submit(GenerationRequest request,
                                            std::shared_ptr<GenerationSink> sink) {
  return impl_->Submit(std::move(request), std::move(sink));
}
absl::StatusOr<std::vector<RequestId>> Scheduler::SubmitAll(std::vector<Submission> submissions,
                                                            size_t* refused) {
  return impl_->SubmitAll(std::move(submissions), refused);
}
bool Scheduler::Cancel(RequestId id) { return impl_->Cancel(id); }
void Scheduler::BeginDrain() { impl_->BeginDrain(); }
bool Scheduler::draining() const { return impl_->draining(); }
bool Scheduler::WaitIdle(absl::Time deadline) { return impl_->WaitIdle(deadline); }
void Scheduler::Stop() { impl_->Stop(); }
SchedulerStats Scheduler::stats() const { return impl_->stats(); }
SessionStore& Scheduler::sessions() { return impl_->sessions(); }
const SchedulerOptions& Scheduler::options() const { return impl_->options(); }
const models::ModelConfig& Scheduler::model_config() const { return impl_->model().config(); }
const models::Seq2seqShape* Scheduler::seq2seq() const { return impl_->model().seq2seq(); }

const models::FlaConfig* Scheduler::fla() const { return impl_->model().fla(); }
int64_t Scheduler::state_bytes_per_request() const {
  return impl_->model().state_bytes_per_request();
}
kernels::Backend Scheduler::backend() const { return impl_->model().backend(); }
const Tokenizer* Scheduler::tokenizer() const { return impl_->tokenizer(); }
const std::vector<int32_t>& Scheduler::eos_ids() const { return impl_->eos_ids(); }
int64_t Scheduler::max_context() const { return impl_->max_context(); }

}  // namespace slotserve::engine
