// ValidateGenerationRequest (engine/request_validation.h) on its own: each bad field is
// refused with INVALID_ARGUMENT (FAILED_PRECONDITION for stop sequences without a tokenizer)
// naming the field as the wire API does, saying what was expected and what was given.
// (Scheduler::Submit's own refusals, and that a refusal reaches the caller, are in
// scheduler_test.cc.)
#include "engine/request_validation.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

namespace slotserve::engine {
namespace {

RequestLimits Limits() {
  RequestLimits limits;
  limits.vocab_size = 64;
  limits.max_positions = 1 << 30;
  limits.max_prompt_tokens = 8;
  limits.default_max_new_tokens = 128;
  limits.max_new_tokens_limit = 4096;
  limits.max_stop_sequences = 16;
  limits.max_stop_sequence_bytes = 256;
  limits.max_top_logprobs = 20;
  limits.has_tokenizer = false;
  return limits;
}

GenerationRequest Good() {
  GenerationRequest request;
  request.prompt_ids = {5};
  request.sampling.temperature = 0.0f;
  request.stopping.max_new_tokens = 10;
  return request;
}

struct BadField {
  const char* name;
  std::function<void(GenerationRequest&)> spoil;
  absl::StatusCode code;
  const char* message_part;
};

TEST(RequestValidationTest, AGoodRequestPasses) {
  EXPECT_TRUE(ValidateGenerationRequest(Good(), Limits()).ok());
  GenerationRequest everything = Good();
  everything.prompt_ids.assign(8, 63);
  everything.sampling = {};
  everything.sampling.top_k = 5;
  everything.sampling.top_p = 1.0f;
  everything.sampling.min_p = 1.0f;
  everything.sampling.repetition_penalty = 1.3f;
  everything.sampling.presence_penalty = -2.0f;
  everything.sampling.frequency_penalty = 2.0f;
  everything.sampling.logit_bias = {{0, -100.0f}, {63, 100.0f}, {7, 0.5f}};
  everything.stopping.max_new_tokens = 4096;
  everything.stopping.min_new_tokens = 4096;
  everything.stopping.stop_token_ids = {0, 63};
  everything.logprobs.top_n = 20;
  const absl::Status status = ValidateGenerationRequest(everything, Limits());
  EXPECT_TRUE(status.ok()) << status;
}

TEST(RequestValidationTest, MessagesNameTheField) {
  const std::vector<BadField> cases = {
      {"temperature", [](auto& r) { r.sampling.temperature = -1; },
       absl::StatusCode::kInvalidArgument,
       "sampling.temperature must be >= 0 (0 = greedy), got -1"},
      {"top_k", [](auto& r) { r.sampling.top_k = -3; }, absl::StatusCode::kInvalidArgument,
       "sampling.top_k must be >= 0"},
      {"top_p zero", [](auto& r) { r.sampling.top_p = 0; }, absl::StatusCode::kInvalidArgument,
       "sampling.top_p must be in (0, 1]"},
      {"top_p above one", [](auto& r) { r.sampling.top_p = 1.5; },
       absl::StatusCode::kInvalidArgument, "got 1.5"},
      {"min_p", [](auto& r) { r.sampling.min_p = 2; }, absl::StatusCode::kInvalidArgument,
       "sampling.min_p must be in [0, 1]"},
      {"repetition", [](auto& r) { r.sampling.repetition_penalty = 0; },
       absl::StatusCode::kInvalidArgument, "sampling.repetition_penalty must be > 0"},
      {"presence", [](auto& r) { r.sampling.presence_penalty = 3; },
       absl::StatusCode::kInvalidArgument, "sampling.presence_penalty must be in [-2, 2]"},
      {"frequency", [](auto& r) { r.sampling.frequency_penalty = -2.5; },
       absl::StatusCode::kInvalidArgument, "sampling.frequency_penalty"},
      {"bias id",
       [](auto& r) {
         r.sampling.logit_bias = {{3, 1.0f}, {64, 1.0f}};
       },
       absl::StatusCode::kInvalidArgument,
       "sampling.logit_bias token ids must be in [0, 64) (the vocabulary), got 64"},
      {"negative bias id",
       [](auto& r) {
         r.sampling.logit_bias = {{-1, 1.0f}};
       },
       absl::StatusCode::kInvalidArgument, "got -1"},
      {"bias twice",
       [](auto& r) {
         r.sampling.logit_bias = {{3, 1.0f}, {4, 2.0f}, {3, 5.0f}};
       },
       absl::StatusCode::kInvalidArgument, "sampling.logit_bias lists token 3 twice"},
      {"bias too large",
       [](auto& r) {
         r.sampling.logit_bias = {{3, 100.5f}};
       },
       absl::StatusCode::kInvalidArgument,
       "sampling.logit_bias biases must be in [-100, 100], got 100.5 for token 3"},
      {"bias not a number",
       [](auto& r) {
         r.sampling.logit_bias = {{3, std::nanf("")}};
       },
       absl::StatusCode::kInvalidArgument, "for token 3"},
      {"empty prompt", [](auto& r) { r.prompt_ids.clear(); }, absl::StatusCode::kInvalidArgument,
       "prompt must hold at least one token"},
      {"unknown token",
       [](auto& r) {
         r.prompt_ids = {5, 64};
       },
       absl::StatusCode::kInvalidArgument, "prompt_ids[1] must be a token id in [0, 64), got 64"},
      {"long prompt", [](auto& r) { r.prompt_ids.assign(9, 5); },
       absl::StatusCode::kInvalidArgument, "prompt must be at most 8 tokens, got 9"},
      {"max_new_tokens", [](auto& r) { r.stopping.max_new_tokens = 5000; },
       absl::StatusCode::kInvalidArgument, "stopping.max_new_tokens must be in [1, 4096]"},
      {"min_new_tokens", [](auto& r) { r.stopping.min_new_tokens = 11; },
       absl::StatusCode::kInvalidArgument, "stopping.min_new_tokens must be in [0, max_new_tokens"},
      {"stop token", [](auto& r) { r.stopping.stop_token_ids = {-1}; },
       absl::StatusCode::kInvalidArgument, "stopping.stop_token_ids[0]"},
      {"empty stop sequence", [](auto& r) { r.stopping.stop_sequences = {""}; },
       absl::StatusCode::kInvalidArgument, "stopping.stop_sequences[0] must not be empty"},
      {"bad UTF-8 stop", [](auto& r) { r.stopping.stop_sequences = {"\xC3"}; },
       absl::StatusCode::kInvalidArgument, "stopping.stop_sequences[0] must be valid UTF-8"},
      {"stop without tokenizer", [](auto& r) { r.stopping.stop_sequences = {"x"}; },
       absl::StatusCode::kFailedPrecondition, "stopping.stop_sequences need the model's"},
      {"top_n", [](auto& r) { r.logprobs.top_n = 21; }, absl::StatusCode::kInvalidArgument,
       "logprobs.top_n must be in [0, 20], got 21"},
  };
  for (const BadField& bad : cases) {
    GenerationRequest request = Good();
    bad.spoil(request);
    const absl::Status status = ValidateGenerationRequest(request, Limits());
    EXPECT_EQ(status.code(), bad.code) << bad.name << ": " << status;
    EXPECT_NE(status.message().find(bad.message_part), std::string::npos)
        << bad.name << ": " << status;
  }
}

TEST(RequestValidationTest, BeamSearchRefusesWhatContradictsItQuotingTheValue) {
  RequestLimits limits = Limits();
  limits.max_beam_width = 4;
  limits.max_n = 4;
  limits.has_tokenizer = true;
  auto beam = [](GenerationRequest& r) { r.beam = {.width = 3, .n_best = 2}; };
  GenerationRequest good = Good();
  beam(good);
  good.beam.length_penalty = -0.5;
  good.stopping.stop_token_ids = {7};
  good.stopping.min_new_tokens = 2;
  EXPECT_TRUE(ValidateGenerationRequest(good, limits).ok());
  const std::vector<BadField> cases = {
      {"width", [](auto& r) { r.beam.width = 5; }, absl::StatusCode::kInvalidArgument,
       "beam.width must be in [1, 4] (the server's --max-beam-width, capped by its slots), got 5"},
      {"width zero", [](auto& r) { r.beam.width = 0; }, absl::StatusCode::kInvalidArgument,
       "beam.width must be in [1, 4]"},
      {"n_best", [](auto& r) { r.beam.n_best = 4; }, absl::StatusCode::kInvalidArgument,
       "beam.n_best must be in [1, beam.width = 3], got 4"},
      {"length_penalty", [](auto& r) { r.beam.length_penalty = NAN; },
       absl::StatusCode::kInvalidArgument, "beam.length_penalty must be finite, got nan"},
      {"n", [](auto& r) { r.n = 2; }, absl::StatusCode::kInvalidArgument,
       "n must be 1 with beam.width = 3 (the n-best hypotheses come back in one stream), got 2"},
      {"temperature", [](auto& r) { r.sampling.temperature = 0.7f; },
       absl::StatusCode::kInvalidArgument,
       "sampling.temperature must be 0 or unset with beam.width = 3 (beam search is "
       "deterministic), got 0.7"},
      {"top_k", [](auto& r) { r.sampling.top_k = 5; }, absl::StatusCode::kInvalidArgument,
       "sampling.top_k must be 0 with beam.width = 3 (beam search is deterministic), got 5"},
      {"top_p", [](auto& r) { r.sampling.top_p = 0.9f; }, absl::StatusCode::kInvalidArgument,
       "sampling.top_p must be 1 or unset with beam.width = 3"},
      {"min_p", [](auto& r) { r.sampling.min_p = 0.5f; }, absl::StatusCode::kInvalidArgument,
       "sampling.min_p must be 0 with beam.width = 3 (beam search is deterministic), got 0.5"},
      {"repetition", [](auto& r) { r.sampling.repetition_penalty = 1.5f; },
       absl::StatusCode::kInvalidArgument, "sampling.repetition_penalty must be 1 or unset"},
      {"presence", [](auto& r) { r.sampling.presence_penalty = 1; },
       absl::StatusCode::kInvalidArgument, "sampling.presence_penalty must be 0"},
      {"frequency", [](auto& r) { r.sampling.frequency_penalty = -1; },
       absl::StatusCode::kInvalidArgument, "sampling.frequency_penalty must be 0"},
      {"seed", [](auto& r) { r.sampling.seed = 42; }, absl::StatusCode::kInvalidArgument,
       "sampling.seed must be unset with beam.width = 3 (beam search is deterministic), got 42"},
      {"logprobs", [](auto& r) { r.logprobs.enabled = true; }, absl::StatusCode::kInvalidArgument,
       "logprobs.enabled must be false with beam.width = 3"},
      {"logit bias",
       [](auto& r) {
         r.sampling.logit_bias = {{3, 1.0f}, {4, -1.0f}};
       },
       absl::StatusCode::kInvalidArgument,
       "sampling.logit_bias must be empty with beam.width = 3 (hypotheses are ranked by the "
       "model's raw log-probabilities), got 2 token(s)"},
      {"stop sequences", [](auto& r) { r.stopping.stop_sequences = {"amen"}; },
       absl::StatusCode::kInvalidArgument,
       "stopping.stop_sequences must be empty with beam.width = 3 (hypotheses end at eos, "
       "stop_token_ids or max_new_tokens), got 1 sequence(s), the first \"amen\""},
      {"session keep", [](auto& r) { r.session.keep = true; }, absl::StatusCode::kInvalidArgument,
       "session must be unset with beam.width = 3"},
      {"session handle", [](auto& r) { r.session.handle = "s-1"; },
       absl::StatusCode::kInvalidArgument, "got handle s-1"},
  };
  for (const BadField& bad : cases) {
    GenerationRequest request = Good();
    beam(request);
    bad.spoil(request);
    const absl::Status status = ValidateGenerationRequest(request, limits);
    EXPECT_EQ(status.code(), bad.code) << bad.name << ": " << status;
    EXPECT_NE(status.message().find(bad.message_part), std::string::npos)
        << bad.name << ": " << status;
  }
  // Width 1 is no beam search: sampling options are the request's own.
  GenerationRequest sampled = Good();
  sampled.beam.width = 1;
  sampled.sampling.temperature = 0.8f;
  sampled.sampling.seed = 3;
  EXPECT_TRUE(ValidateGenerationRequest(sampled, limits).ok());
}

TEST(RequestValidationTest, CountsAreQuotedAsSentNotClamped) {
  GenerationRequest request = Good();
  request.stopping.max_new_tokens = 4294967295;
  EXPECT_NE(ValidateGenerationRequest(request, Limits())
                .message()
                .find("stopping.max_new_tokens must be in [1, 4096] (0 = the default, 128), got "
                      "4294967295"),
            std::string::npos);
  request = Good();
  request.logprobs.top_n = 4294967295;
  EXPECT_NE(ValidateGenerationRequest(request, Limits()).message().find("got 4294967295"),
            std::string::npos);
}

TEST(RequestValidationTest, PromptsLongerThanTheModelsContextAreRefused) {
  RequestLimits limits = Limits();
  limits.max_positions = 4;
  GenerationRequest request = Good();
  request.prompt_ids.assign(5, 7);
  const absl::Status status = ValidateGenerationRequest(request, limits);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("at most 4 tokens (the model's longest context), got 5"),
            std::string::npos)
      << status;
}

TEST(RequestValidationTest, StopSequenceCountAndLengthAreBounded) {
  RequestLimits limits = Limits();
  limits.has_tokenizer = true;
  limits.max_stop_sequences = 2;
  limits.max_stop_sequence_bytes = 4;
  GenerationRequest request = Good();
  request.stopping.stop_sequences = {"a", "b", "c"};
  EXPECT_NE(ValidateGenerationRequest(request, limits)
                .message()
                .find("stopping.stop_sequences may hold at most 2 sequences, got 3"),
            std::string::npos);
  request.stopping.stop_sequences = {"a", "hello"};
  EXPECT_NE(ValidateGenerationRequest(request, limits)
                .message()
                .find("stopping.stop_sequences[1] must be at most 4 bytes, got 5"),
            std::string::npos);
  request.stopping.stop_sequences = {"a", "hell"};
  EXPECT_TRUE(ValidateGenerationRequest(request, limits).ok());
}

TEST(RequestValidationTest, ZeroMaxNewTokensMeansTheDefault) {
  StoppingOptions stopping;
  EXPECT_EQ(EffectiveMaxNewTokens(stopping, Limits()), 128);
  stopping.max_new_tokens = 7;
  EXPECT_EQ(EffectiveMaxNewTokens(stopping, Limits()), 7);
  // min_new_tokens is bounded by the default when max_new_tokens is left at 0.
  GenerationRequest request = Good();
  request.stopping.max_new_tokens = 0;
  request.stopping.min_new_tokens = 129;
  EXPECT_NE(ValidateGenerationRequest(request, Limits())
                .message()
                .find("stopping.min_new_tokens must be in [0, max_new_tokens = 128], got 129"),
            std::string::npos);
}

TEST(RequestValidationTest, ScoringThePromptNeedsLogprobsAndAPromptOfItsOwn) {
  GenerationRequest request = Good();
  request.logprobs.prompt = true;
  EXPECT_NE(ValidateGenerationRequest(request, Limits())
                .message()
                .find("logprobs.prompt (score the prompt) needs logprobs.enabled"),
            std::string::npos);
  request.logprobs.enabled = true;
  EXPECT_TRUE(ValidateGenerationRequest(request, Limits()).ok());
  request.session.handle = "ss-1234";
  EXPECT_NE(ValidateGenerationRequest(request, Limits())
                .message()
                .find("cannot continue a session (ss-1234)"),
            std::string::npos);
  request.session.handle.clear();
  RequestLimits seq2seq = Limits();
  seq2seq.seq2seq = true;
  seq2seq.max_source_tokens = 8;
  request.source_ids = {5, 6};
  // A translation's tokens are scored given its source.
  EXPECT_TRUE(ValidateGenerationRequest(request, seq2seq).ok());
}

}  // namespace
}  // namespace slotserve::engine
