// RequestStart alone, over the scripted fake model's real StateArena (each slot's state is one
// float: the last token fed): a continued session's state restored into the slot (and a
// missing one refused naming the session), a prompt started from its longest cached prefix
// (and a scored prompt fed whole), and a fork's parent copying its state into its waiting
// choice once only its last prompt token is left.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "engine/active_request.h"
#include "engine/engine_observer.h"
#include "engine/prefix_cache.h"
#include "engine/request_start.h"
#include "tests/unit/engine/fake_language_model.h"
#include "tests/unit/engine/recording_sink.h"

namespace slotserve::engine {
namespace {

// Records each ending the way the scheduler's finisher would see it.
class RecordingFinisher : public RequestFinisher {
 public:
  struct Ending {
    RequestId id;
    int choice_index;
    absl::Status status;
  };
  void Finish(ActiveRequest& request, FinishReason /*reason*/, absl::Status status) override {
    request.MarkFinished();
    endings.push_back({request.id(), request.choice_index(), std::move(status)});
  }
  void ReleaseSlot(ActiveRequest& /*request*/, int /*slot*/) override {}
  std::vector<Ending> endings;
};

class RequestStartTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto arena = model_.AllocateStates(4);
    ASSERT_TRUE(arena.ok()) << arena.status();
    arena_ = *std::move(arena);
  }

  std::unique_ptr<ActiveRequest> Admitted(GenerationRequest request, int slot, RequestId id = 1) {
    StopLimits limits{.max_new_tokens = 4, .eos_ids = {2}, .max_positions = 1 << 20};
    auto active = std::make_unique<ActiveRequest>(
        id, std::move(request), std::make_shared<testing::RecordingSink>(), /*seed=*/7, limits,
        /*tokenizer=*/nullptr, absl::Now());
    active->Admit(slot, absl::Now());
    return active;
  }

  // Feeds `tokens` into `slot` through the model, as a prefill would.
  void Feed(int slot, const std::vector<int32_t>& tokens) {
    std::vector<float> logits(model_.config().vocab_size);
    ASSERT_TRUE(
        model_.Prefill(*arena_, slot, tokens, models::LogitsWanted::kLastToken, logits).ok());
  }

  float StateOf(int slot) const { return arena_->device_data()[slot * arena_->floats_per_slot()]; }

  testing::FakeLanguageModel model_;
  std::unique_ptr<models::StateArena> arena_;
  EngineObserver observer_;
  RecordingFinisher finisher_;
};

TEST_F(RequestStartTest, AContinuedSessionsStateFillsTheSlot) {
  Feed(3, {5, 9, 11});  // the state a former request left: 3 tokens in, last 11
  RequestState saved;
  ASSERT_TRUE(arena_->Save(3, &saved.payload).ok());
  saved.token_count = 3;
  saved.pending_token = 12;
  GenerationRequest request;
  request.prompt_ids = {20};
  request.session.handle = "s-1";
  std::unique_ptr<ActiveRequest> active = Admitted(request, 0);
  active->AttachSessionState(std::move(saved));

  RequestStart start(model_, *arena_, observer_, finisher_, nullptr);
  EXPECT_TRUE(start.FillSlot(*active));
  EXPECT_TRUE(finisher_.endings.empty());
  EXPECT_EQ(arena_->position(0), 3);
  EXPECT_EQ(StateOf(0), 11.0f);
}

TEST_F(RequestStartTest, AContinuedSessionWithoutItsStateEndsNamingTheSession) {
  GenerationRequest request;
  request.prompt_ids = {20};
  request.session.handle = "s-missing";
  std::unique_ptr<ActiveRequest> active = Admitted(request, 0);

  RequestStart start(model_, *arena_, observer_, finisher_, nullptr);
  EXPECT_FALSE(start.FillSlot(*active));
  ASSERT_EQ(finisher_.endings.size(), 1u);
  EXPECT_EQ(finisher_.endings[0].status.code(), absl::StatusCode::kInternal);
  EXPECT_TRUE(absl::StrContains(finisher_.endings[0].status.message(), "session s-missing"))
      << finisher_.endings[0].status;
}

TEST_F(RequestStartTest, APromptStartsFromItsLongestCachedPrefixUnlessItIsScored) {
  PrefixCache cache(/*block_tokens=*/2, /*max_bytes=*/1 << 20);
  Feed(3, {4, 5, 6, 7});
  std::vector<uint8_t> snapshot;
  ASSERT_TRUE(arena_->Save(3, &snapshot).ok());
  cache.Insert(std::vector<int32_t>{4, 5, 6, 7}, snapshot);
  RequestStart start(model_, *arena_, observer_, finisher_, &cache);

  GenerationRequest request;
  request.prompt_ids = {4, 5, 6, 7, 8};
  std::unique_ptr<ActiveRequest> active = Admitted(request, 0);
  EXPECT_TRUE(start.FillSlot(*active));
  EXPECT_EQ(active->prompt_fed(), 4u);
  EXPECT_EQ(arena_->position(0), 4);
  EXPECT_EQ(StateOf(0), 7.0f);

  request.logprobs.prompt = true;  // every prompt row must be scored: fed from token 0
  std::unique_ptr<ActiveRequest> scored = Admitted(request, 1, /*id=*/2);
  EXPECT_TRUE(start.FillSlot(*scored));
  EXPECT_EQ(scored->prompt_fed(), 0u);
  EXPECT_EQ(arena_->position(1), 0);
  EXPECT_EQ(cache.stats().hits, 1);
  EXPECT_TRUE(finisher_.endings.empty());
}

TEST_F(RequestStartTest, AForkParentCopiesItsStateIntoItsChoiceOnlyAtTheForkPoint) {
  GenerationRequest request;
  request.prompt_ids = {4, 5, 6};
  request.n = 2;
  std::vector<std::unique_ptr<ActiveRequest>> running;
  running.push_back(Admitted(request, 0));
  running.push_back(running[0]->MakeChoice(1));
  running[1]->Admit(1, absl::Now());
  RequestStart start(model_, *arena_, observer_, finisher_, nullptr);

  start.ForkReadyParents(running);  // nothing fed yet: two prompt tokens still to go
  EXPECT_EQ(running[0]->fork_stage(), ActiveRequest::ForkStage::kParent);
  EXPECT_EQ(running[1]->fork_stage(), ActiveRequest::ForkStage::kChild);

  Feed(0, {4, 5});
  running[0]->PromptFed(2, absl::Now());
  start.ForkReadyParents(running);
  for (const auto& choice : running) {
    EXPECT_EQ(choice->fork_stage(), ActiveRequest::ForkStage::kNone);
    EXPECT_EQ(choice->prompt_fed(), 2u);
    EXPECT_EQ(choice->prompt_feedable(), 1) << "each choice feeds the last prompt token itself";
  }
  EXPECT_EQ(arena_->position(1), 2);
  EXPECT_EQ(StateOf(1), 5.0f);
  EXPECT_TRUE(finisher_.endings.empty());
}

}  // namespace
}  // namespace slotserve::engine
