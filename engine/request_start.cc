#include "engine/request_start.h"

#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/ending_status.h"

namespace slotserve::engine {

RequestStart::RequestStart(models::LanguageModel& model, models::StateArena& arena,
                           EngineObserver& observer, RequestFinisher& finisher,
                           PrefixCache* prefix_cache)
    : model_(model),
      arena_(arena),
      observer_(observer),
      finisher_(finisher),
      prefix_cache_(prefix_cache) {}

bool RequestStart::FillSlot(ActiveRequest& request) {
  if (request.continues_session()) return RestoreSession(request);
  if (request.has_source()) return EncodeSource(request);
  RestorePrefix(request);
  return true;
}

// Puts the session's state (taken from the store at submission) into the request's slot.
bool RequestStart::RestoreSession(ActiveRequest& request) {
  std::optional<RequestState> state = request.TakeSessionState();
  const absl::Status restored = state ? arena_.Restore(request.slot(), state->payload)
                                      : absl::InternalError("no session state");
  if (!restored.ok()) {
    finisher_.Finish(
        request, FinishReason::kCancelled,
        absl::InternalError(absl::StrCat("restoring session ", request.request().session.handle,
                                         ": ", restored.message())));
  }
  return restored.ok();
}

// Runs the encoder over a new seq2seq request's source into its slot's cross memory. Its time
// counts in the request's prefill. Prefix states are not used for such requests: the cache is
// keyed by decoder tokens only, so a hit would bring another source's cross memory.
bool RequestStart::EncodeSource(ActiveRequest& request) {
  const std::vector<int32_t>& source = request.request().source_ids;
  const absl::Time start = absl::Now();
  const absl::Status encoded = model_.Encode(arena_, request.slot(), source);
  observer_.OnStep(StepPhase::kEncode, static_cast<int>(source.size()), absl::Now() - start);
  if (!encoded.ok()) {
    finisher_.Finish(request, FinishReason::kCancelled, ModelError("encode", encoded));
  }
  return encoded.ok();
}

// Starts a new request's prefill from the longest cached prefix of its prompt, if any.
void RequestStart::RestorePrefix(ActiveRequest& request) {
  // A prompt being scored is fed whole: a prefix state would skip rows it must score.
  if (prefix_cache_ == nullptr || request.request().logprobs.prompt) return;
  const std::optional<PrefixCache::Hit> hit = prefix_cache_->Lookup(request.request().prompt_ids);
  if (hit && arena_.Restore(request.slot(), *hit->state).ok()) {
    request.StartFromPrefix(hit->tokens);
  } else if (hit) {
    arena_.Reset(request.slot()).IgnoreError();  // prefill from token 0 after all
  }
  observer_.OnPrefixCacheStats(prefix_cache_->stats());
}

void RequestStart::ForkReadyParents(std::span<const std::unique_ptr<ActiveRequest>> running) {
  for (const auto& parent : running) {
    if (parent->fork_stage() != ActiveRequest::ForkStage::kParent ||
        parent->prompt_feedable() > 0 || parent->finished()) {
      continue;
    }
    for (const auto& child : running) {
      if (child->id() != parent->id() || child->fork_stage() != ActiveRequest::ForkStage::kChild) {
        continue;
      }
      if (const absl::Status copied = arena_.Copy(parent->slot(), child->slot()); !copied.ok()) {
        finisher_.Finish(*child, FinishReason::kCancelled,
                         absl::InternalError(absl::StrCat("fork: ", copied.message())));
        continue;
      }
      child->Forked(parent->prompt_fed());
    }
    parent->Forked(parent->prompt_fed());
  }
}

}  // namespace slotserve::engine
