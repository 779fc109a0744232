// Engine events -> OpenAI's response objects: whole answers, stream chunks, usage and both
// logprobs shapes.
#include "server/http/openai_response.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>

#include "server/http/prompt_batch_sink.h"
#include "server/http/token_event_queue.h"
#include "tests/unit/engine/tiny_tokenizer.h"

namespace slotserve::server::http {
namespace {

using nlohmann::ordered_json;

engine::Finished Finished(engine::FinishReason reason, int prompt, int generated) {
  engine::Finished finished;
  finished.reason = reason;
  finished.prompt_tokens = prompt;
  finished.generated_tokens = generated;
  return finished;
}

engine::TokenChunk Chunk(std::vector<int32_t> ids, std::string text) {
  engine::TokenChunk chunk;
  chunk.ids = std::move(ids);
  chunk.text = std::move(text);
  return chunk;
}

OpenAiRequest Request(Endpoint endpoint) {
  OpenAiRequest request;
  request.endpoint = endpoint;
  request.model = "tiny";
  return request;
}

const ResponseHeader kHeader{"cmpl-1", 1700000000, "tiny"};

TEST(OpenAiResponseTest, WholeCompletionAndChatAnswers) {
  OpenAiRequest completion = Request(Endpoint::kCompletions);
  ResponseBuilder builder(completion, kHeader, nullptr);
  EXPECT_EQ(
      builder.Complete({{Chunk({5, 6}, " and"), Finished(engine::FinishReason::kLength, 3, 2)}})
          .dump(),
      R"({"id":"cmpl-1","object":"text_completion","created":1700000000,"model":"tiny",)"
      R"("choices":[{"index":0,"text":" and","logprobs":null,"finish_reason":"length"}],)"
      R"("usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}})");
  OpenAiRequest chat = Request(Endpoint::kChat);
  chat.return_token_ids = true;
  ResponseBuilder chat_builder(chat, kHeader, nullptr);
  const ordered_json answer = chat_builder.Complete(
      {{Chunk({7}, "Amen"), Finished(engine::FinishReason::kStopSequence, 4, 1)}});
  EXPECT_EQ(answer["object"], "chat.completion");
  EXPECT_EQ(answer["choices"][0]["message"].dump(), R"({"role":"assistant","content":"Amen"})");
  EXPECT_EQ(answer["choices"][0]["finish_reason"], "stop");
  EXPECT_EQ(answer["choices"][0]["token_ids"].dump(), "[7]");
  EXPECT_EQ(OpenAiFinishReason(engine::FinishReason::kEos), std::string("stop"));
  EXPECT_EQ(OpenAiFinishReason(engine::FinishReason::kStopToken), std::string("stop"));
}

TEST(OpenAiResponseTest, StreamChunksSkipEmptyEventsAndEndWithFinishReasonAndUsage) {
  OpenAiRequest chat = Request(Endpoint::kChat);
  chat.include_usage = true;
  ResponseBuilder builder(chat, kHeader, nullptr);
  const std::vector<ordered_json> start = builder.StreamStart();
  ASSERT_EQ(start.size(), 1u);
  EXPECT_EQ(start[0]["choices"][0]["delta"].dump(), R"({"role":"assistant","content":""})");
  EXPECT_TRUE(start[0]["usage"].is_null());
  // Ids whose text is held back (an unfinished character) make no chunk.
  EXPECT_FALSE(builder.StreamChunk(Chunk({9}, ""), nullptr).has_value());
  const std::optional<ordered_json> text = builder.StreamChunk(Chunk({10}, "In"), nullptr);
  ASSERT_TRUE(text.has_value());
  EXPECT_EQ((*text)["object"], "chat.completion.chunk");
  EXPECT_EQ((*text)["choices"][0]["delta"].dump(), R"({"content":"In"})");
  EXPECT_TRUE((*text)["choices"][0]["finish_reason"].is_null());
  EXPECT_TRUE(text->contains("usage"));
  const engine::Finished finished = Finished(engine::FinishReason::kLength, 2, 2);
  const std::optional<ordered_json> last = builder.StreamChunk(Chunk({}, ""), &finished);
  ASSERT_TRUE(last.has_value());
  EXPECT_EQ((*last)["choices"][0]["delta"].dump(), "{}");
  EXPECT_EQ((*last)["choices"][0]["finish_reason"], "length");
  const ordered_json usage = builder.UsageChunk({finished});
  EXPECT_TRUE(usage["choices"].empty());
  EXPECT_EQ(usage["usage"]["total_tokens"], 4);

  OpenAiRequest completion = Request(Endpoint::kCompletions);
  ResponseBuilder plain(completion, kHeader, nullptr);
  EXPECT_TRUE(plain.StreamStart().empty());
  const std::optional<ordered_json> chunk = plain.StreamChunk(Chunk({1}, " the"), nullptr);
  ASSERT_TRUE(chunk.has_value());
  EXPECT_EQ((*chunk)["object"], "text_completion");
  EXPECT_EQ((*chunk)["choices"][0]["text"], " the");
  EXPECT_FALSE(chunk->contains("usage"));  // only with include_usage
}

TEST(OpenAiResponseTest, SeveralChoicesAnswerInIndexOrderAndShareThePromptInUsage) {
  OpenAiRequest completion = Request(Endpoint::kCompletions);
  completion.generation.n = 2;
  ResponseBuilder builder(completion, kHeader, nullptr);
  engine::Finished first = Finished(engine::FinishReason::kLength, 3, 2);
  engine::Finished second = Finished(engine::FinishReason::kEos, 3, 1);
  second.choice_index = 1;
  const ordered_json answer =
      builder.Complete({{Chunk({5, 6}, " and"), first}, {Chunk({7}, " so"), second}});
  ASSERT_EQ(answer["choices"].size(), 2u);
  EXPECT_EQ(answer["choices"][0]["index"], 0);
  EXPECT_EQ(answer["choices"][0]["text"], " and");
  EXPECT_EQ(answer["choices"][1]["index"], 1);
  EXPECT_EQ(answer["choices"][1]["text"], " so");
  EXPECT_EQ(answer["choices"][1]["finish_reason"], "stop");
  // 3 prompt tokens once (prefilled once, then forked), 2 + 1 generated.
  EXPECT_EQ(answer["usage"].dump(),
            R"({"prompt_tokens":3,"completion_tokens":3,"total_tokens":6})");

  OpenAiRequest chat = Request(Endpoint::kChat);
  chat.generation.n = 3;
  ResponseBuilder chat_builder(chat, kHeader, nullptr);
  const std::vector<ordered_json> starts = chat_builder.StreamStart();
  ASSERT_EQ(starts.size(), 3u);
  EXPECT_EQ(starts[2]["choices"][0]["index"], 2);
  engine::TokenChunk of_choice_two = Chunk({8}, "Lo");
  of_choice_two.choice_index = 2;
  const std::optional<ordered_json> chunk = chat_builder.StreamChunk(of_choice_two, nullptr);
  ASSERT_TRUE(chunk.has_value());
  EXPECT_EQ((*chunk)["choices"][0]["index"], 2);
  EXPECT_EQ((*chunk)["choices"][0]["delta"]["content"], "Lo");
}

// A batch of two prompts with two choices each: prompt p's choice j is choice 2p + j, each
// prompt's tokens count once in usage, and each choice's echo is its own prompt's.
TEST(OpenAiResponseTest, ABatchAnswersEachPromptsChoicesInTurnWithItsOwnEcho) {
  OpenAiRequest completion = Request(Endpoint::kCompletions);
  completion.generation.n = 2;
  completion.generation.prompt_ids = {1, 2, 3};
  completion.echo = true;
  completion.echo_text = "In the";
  completion.further_prompts.push_back({{1, 4}, "And"});
  ResponseBuilder builder(completion, kHeader, nullptr);
  std::vector<ChoiceOutput> outputs;
  const std::vector<std::string> texts = {" a", " b", " c", " d"};
  for (int index = 0; index < 4; ++index) {
    engine::Finished finished =
        Finished(engine::FinishReason::kLength, index < 2 ? 3 : 2, index + 1);
    finished.choice_index = index;
    outputs.push_back({Chunk({9}, texts[index]), finished});
  }
  const ordered_json answer = builder.Complete(outputs);
  ASSERT_EQ(answer["choices"].size(), 4u);
  const std::vector<std::string> want = {"In the a", "In the b", "And c", "And d"};
  for (int index = 0; index < 4; ++index) {
    EXPECT_EQ(answer["choices"][index]["index"], index);
    EXPECT_EQ(answer["choices"][index]["text"], want[index]);
  }
  // Prompts of 3 and 2 tokens, 1 + 2 + 3 + 4 generated.
  EXPECT_EQ(answer["usage"].dump(),
            R"({"prompt_tokens":5,"completion_tokens":10,"total_tokens":15})");
  EXPECT_EQ(builder.PromptOf(1), 0);
  EXPECT_EQ(builder.PromptOf(2), 1);

  // Streamed without logprobs: every prompt's echo first, each choice under its index.
  ResponseBuilder streamed(completion, kHeader, nullptr);
  const std::vector<ordered_json> start = streamed.StreamStart();
  ASSERT_EQ(start.size(), 4u);
  for (int index = 0; index < 4; ++index) {
    EXPECT_EQ(start[index]["choices"][0]["index"], index);
    EXPECT_EQ(start[index]["choices"][0]["text"], index < 2 ? "In the" : "And");
  }
  EXPECT_TRUE(streamed.EchoChunks(1, nullptr).empty()) << "each prompt is echoed once";

  // With logprobs, a prompt is echoed when its scores arrive, and only that prompt's choices.
  completion.generation.logprobs = {.enabled = true, .prompt = true};
  ResponseBuilder scored(completion, kHeader, nullptr);
  EXPECT_TRUE(scored.StreamStart().empty());
  const std::vector<ordered_json> second = scored.EchoChunks(1, nullptr);
  ASSERT_EQ(second.size(), 2u);
  EXPECT_EQ(second[0]["choices"][0]["index"], 2);
  EXPECT_EQ(second[1]["choices"][0]["index"], 3);
  EXPECT_EQ(second[1]["choices"][0]["text"], "And");
  EXPECT_EQ(scored.EchoChunks(0, nullptr).size(), 2u);
}

std::vector<engine::GeneratedTokenLogprobs> Logprobs(const std::vector<int32_t>& ids) {
  std::vector<engine::GeneratedTokenLogprobs> logprobs;
  for (int32_t id : ids) {
    engine::GeneratedTokenLogprobs token;
    token.chosen = {id, -0.5f};
    token.top = {{id, -0.5f}, {id + 1, -1.5f}};
    logprobs.push_back(token);
  }
  return logprobs;
}

TEST(OpenAiResponseTest, CompletionLogprobsKeepTheirTextOffsetAcrossChunks) {
  const engine::Tokenizer* tokenizer = engine::testing::TinyTokenizerOrFail();
  ASSERT_NE(tokenizer, nullptr);
  const std::vector<int32_t> ids = *tokenizer->Encode("the beginning");
  ASSERT_GE(ids.size(), 2u);
  const std::vector<int32_t> prompt = *tokenizer->Encode("In");
  LogprobsFormatter formatter(tokenizer, Endpoint::kCompletions, prompt);
  const ordered_json first = formatter.Format(Logprobs({ids[0]}));
  const ordered_json second = formatter.Format(Logprobs({ids[1]}));
  const std::string first_text(tokenizer->TokenBytes(ids[0]));
  EXPECT_EQ(first["tokens"][0], first_text);
  EXPECT_EQ(first["token_logprobs"][0], -0.5);
  EXPECT_EQ(first["top_logprobs"][0][first_text], -0.5);
  EXPECT_EQ(first["top_logprobs"][0].size(), 2u);  // the alternative, and the chosen one
  EXPECT_EQ(first["text_offset"][0], 0);
  EXPECT_EQ(second["text_offset"][0], static_cast<int64_t>(first_text.size()));  // ASCII
  EXPECT_TRUE(formatter.Format({}).is_null());
}

// The tokens of a choice's logprobs concatenate to its text; tokens[0] of a choice whose
// prompt has no text (a translation without a target prefix, a prompt of only BOS) therefore
// reads without SentencePiece's dummy-prefix space, as the engine's detokenizer gives the text,
// and so do its alternatives: the chosen token is one key among them, not two.
TEST(OpenAiResponseTest, LogprobsOfAChoiceThatStartsItsSequenceReadAsItsText) {
  const engine::Tokenizer* tokenizer = engine::testing::TinyTokenizerOrFail();
  ASSERT_NE(tokenizer, nullptr);
  const std::vector<int32_t> ids = *tokenizer->Encode("the beginning");
  ASSERT_GE(ids.size(), 2u);
  ASSERT_EQ(tokenizer->TokenBytes(ids[0]), " the");  // the dummy prefix it decodes without
  const std::string text = tokenizer->Decode(ids);
  ASSERT_EQ(text, "the beginning");

  struct Case {
    const char* what;
    std::vector<int32_t> prompt_ids;
    std::vector<int32_t> source_ids;
    std::string want_first;
  };
  const std::vector<Case> cases = {
      {"seq2seq, no target prefix", {}, {5, 6}, "the"},
      {"decoder-only, BOS alone", {tokenizer->bos_id()}, {}, "the"},
      {"decoder-only, a prompt with text", *tokenizer->Encode("In"), {}, " the"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    OpenAiRequest completion = Request(Endpoint::kCompletions);
    completion.generation.prompt_ids = c.prompt_ids;
    completion.generation.source_ids = c.source_ids;
    completion.generation.logprobs = {.enabled = true};
    const std::string choice_text = c.want_first == "the" ? text : " " + text;
    for (const bool streamed : {false, true}) {
      ResponseBuilder builder(completion, kHeader, tokenizer);
      ordered_json logprobs;
      if (streamed) {  // one chunk per token: the formatter keeps where the sequence is
        for (int32_t id : ids) {
          engine::TokenChunk chunk = Chunk({id}, "");
          chunk.logprobs = Logprobs({id});
          AppendCompletionsLogprobs(
              (*builder.StreamChunk(chunk, nullptr))["choices"][0]["logprobs"], &logprobs);
        }
      } else {
        engine::TokenChunk chunk = Chunk(ids, choice_text);
        chunk.logprobs = Logprobs(ids);
        logprobs = builder.Complete(
            {{chunk, Finished(engine::FinishReason::kLength, 1, 2)}})["choices"][0]["logprobs"];
      }
      std::string joined;
      for (size_t i = 0; i < ids.size(); ++i) {
        EXPECT_EQ(logprobs["text_offset"][i], static_cast<int64_t>(joined.size()));  // ASCII
        joined += logprobs["tokens"][i].get<std::string>();
      }
      EXPECT_EQ(joined, choice_text);
      EXPECT_EQ(logprobs["tokens"][0], c.want_first);
      // Logprobs() lists the chosen id and id + 1 as the alternatives.
      EXPECT_EQ(logprobs["top_logprobs"][0].size(), 2u) << logprobs["top_logprobs"][0].dump();
      EXPECT_TRUE(logprobs["top_logprobs"][0].contains(c.want_first));
    }
  }
}

// A character the tokenizer has no piece for comes as byte-fallback tokens (<0xF0> <0x9F> ...),
// each of which reads as U+FFFD in "tokens"; the offsets still index the text: a token's offset
// is the number of characters the text completes before it, so the tokens of one split
// character share its offset and the token after it starts one character later.
TEST(OpenAiResponseTest, TextOffsetsIndexTheTextAcrossCharactersSplitIntoBytes) {
  const engine::Tokenizer* tokenizer = engine::testing::TinyTokenizerOrFail();
  ASSERT_NE(tokenizer, nullptr);
  const std::vector<int32_t> prompt = *tokenizer->Encode("In");
  int split_characters_seen = 0;
  for (const std::string& sample : engine::testing::SampleTexts()) {
    SCOPED_TRACE(sample);
    const std::vector<int32_t> ids = *tokenizer->Encode(sample);
    // The generated text after a prompt with text: every token's bytes, spaces kept.
    std::string text;
    std::vector<size_t> bytes_before;
    for (int32_t id : ids) {
      bytes_before.push_back(text.size());
      text += tokenizer->TokenBytes(id);
      if (tokenizer->IdToPiece(id).starts_with("<0x")) ++split_characters_seen;
    }
    // Characters of `text` that end within its first `bytes` bytes.
    auto characters_within = [&](size_t bytes) {
      int64_t count = 0;
      for (size_t at = 0; at < text.size();) {
        size_t end = at + 1;
        while (end < text.size() && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) ++end;
        if (end > bytes) break;
        ++count;
        at = end;
      }
      return count;
    };
    for (const bool streamed : {false, true}) {
      LogprobsFormatter formatter(tokenizer, Endpoint::kCompletions, prompt);
      ordered_json logprobs;
      if (streamed) {
        for (int32_t id : ids)
          AppendCompletionsLogprobs(formatter.Format(Logprobs({id})), &logprobs);
      } else {
        logprobs = formatter.Format(Logprobs(ids));
      }
      for (size_t i = 0; i < ids.size(); ++i) {
        EXPECT_EQ(logprobs["text_offset"][i], characters_within(bytes_before[i])) << "token " << i;
      }
    }
  }
  EXPECT_GT(split_characters_seen, 0) << "no sample text has a byte-fallback token";
}

// An echoed target prefix of a translation is scored from its first token (the decoder read
// decoder_start_id before it): that token's alternatives read as it does, at the start.
TEST(OpenAiResponseTest, AnEchoedTargetPrefixKeysItsFirstAlternativesAsItsText) {
  const engine::Tokenizer* tokenizer = engine::testing::TinyTokenizerOrFail();
  ASSERT_NE(tokenizer, nullptr);
  OpenAiRequest completion = Request(Endpoint::kCompletions);
  completion.generation.prompt_ids = *tokenizer->Encode("the beginning");
  completion.generation.source_ids = {5, 6};
  completion.generation.logprobs = {.enabled = true, .prompt = true};
  completion.echo = true;
  completion.echo_text = "the beginning";
  ResponseBuilder builder(completion, kHeader, tokenizer);
  const std::vector<engine::GeneratedTokenLogprobs> scores =
      Logprobs(completion.generation.prompt_ids);
  const ordered_json echo = builder.EchoChunks(0, &scores)[0]["choices"][0]["logprobs"];
  EXPECT_EQ(echo["tokens"][0], "the");
  EXPECT_EQ(echo["top_logprobs"][0].size(), 2u) << echo["top_logprobs"][0].dump();
  EXPECT_EQ(echo["top_logprobs"][0]["the"], -0.5);
  // The generated tokens after it have text before them.
  engine::TokenChunk chunk = Chunk({completion.generation.prompt_ids[0]}, " the");
  chunk.logprobs = Logprobs(chunk.ids);
  EXPECT_EQ((*builder.StreamChunk(chunk, nullptr))["choices"][0]["logprobs"]["tokens"][0], " the");
}

TEST(OpenAiResponseTest, ChatLogprobsCarryBytesAndAlternatives) {
  LogprobsFormatter formatter(nullptr, Endpoint::kChat, {});
  std::vector<engine::GeneratedTokenLogprobs> logprobs = Logprobs({4});
  logprobs[0].chosen.logprob = -std::numeric_limits<float>::infinity();
  const ordered_json content = formatter.Format(logprobs)["content"];
  ASSERT_EQ(content.size(), 1u);
  EXPECT_EQ(content[0]["token"], "token_id:4");  // no tokenizer
  EXPECT_EQ(content[0]["logprob"], -9999.0);     // JSON has no -inf
  EXPECT_EQ(content[0]["top_logprobs"].size(), 2u);
  EXPECT_EQ(content[0]["top_logprobs"][1]["token"], "token_id:5");
  EXPECT_TRUE(content[0]["bytes"].is_array());
}

TEST(OpenAiResponseTest, TheQueueMergesChunksAndHandsTheEndOverOnce) {
  TokenEventQueue queue;
  EXPECT_TRUE(queue.Take(absl::Milliseconds(1)).empty());
  queue.OnTokens(Chunk({1}, "a"));
  queue.OnTokens(Chunk({2}, "b"));
  queue.OnFinished(Finished(engine::FinishReason::kEos, 1, 2));
  EXPECT_TRUE(queue.finished());
  const TokenEventQueue::Events events = queue.Take(absl::ZeroDuration());
  ASSERT_EQ(events.choices.size(), 1u);
  EXPECT_EQ(events.choices[0].tokens.ids, (std::vector<int32_t>{1, 2}));
  EXPECT_EQ(events.choices[0].tokens.text, "ab");
  ASSERT_TRUE(events.choices[0].finished.has_value());
  EXPECT_TRUE(events.request_done);
  EXPECT_TRUE(queue.Take(absl::Milliseconds(1)).empty());
}

TEST(OpenAiResponseTest, TheQueueKeepsChoicesApartAndEndsWithTheLastOne) {
  TokenEventQueue queue;
  engine::TokenChunk second = Chunk({7}, "x");
  second.choice_index = 1;
  queue.OnTokens(Chunk({1}, "a"));
  queue.OnTokens(second);
  queue.OnTokens(Chunk({2}, "b"));
  engine::Finished first_end = Finished(engine::FinishReason::kEos, 1, 2);
  first_end.request_done = false;
  queue.OnFinished(first_end);
  EXPECT_FALSE(queue.finished());
  TokenEventQueue::Events events = queue.Take(absl::ZeroDuration());
  ASSERT_EQ(events.choices.size(), 2u);
  EXPECT_EQ(events.choices[0].index, 0);
  EXPECT_EQ(events.choices[0].tokens.text, "ab");
  EXPECT_TRUE(events.choices[0].finished.has_value());
  EXPECT_EQ(events.choices[1].index, 1);
  EXPECT_EQ(events.choices[1].tokens.choice_index, 1);
  EXPECT_EQ(events.choices[1].tokens.text, "x");
  EXPECT_FALSE(events.choices[1].finished.has_value());
  EXPECT_FALSE(events.request_done);
  engine::Finished second_end = Finished(engine::FinishReason::kLength, 1, 1);
  second_end.choice_index = 1;
  queue.OnFinished(second_end);
  EXPECT_TRUE(queue.finished());
  events = queue.Take(absl::ZeroDuration());
  ASSERT_EQ(events.choices.size(), 1u);
  EXPECT_EQ(events.choices[0].index, 1);
  EXPECT_TRUE(events.request_done);
}

// Two prompts' requests feed one queue through PromptBatchSinks: choices renumbered after the
// earlier prompts', and the response done only when the last request is, whichever it is.
TEST(OpenAiResponseTest, BatchSinksRenumberChoicesAndEndWithTheLastRequest) {
  auto queue = std::make_shared<TokenEventQueue>();
  auto left = std::make_shared<std::atomic<int>>(2);
  PromptBatchSink first(queue, 0, left);
  PromptBatchSink second(queue, 2, left);
  engine::TokenChunk chunk = Chunk({5}, "x");
  chunk.choice_index = 1;
  second.OnTokens(chunk);
  engine::Finished end = Finished(engine::FinishReason::kLength, 2, 1);
  end.choice_index = 1;
  second.OnFinished(end);  // the second prompt's last choice: its request is done
  EXPECT_FALSE(queue->finished()) << "the first prompt's request is still running";
  TokenEventQueue::Events events = queue->Take(absl::ZeroDuration());
  ASSERT_EQ(events.choices.size(), 1u);
  EXPECT_EQ(events.choices[0].index, 3);
  EXPECT_EQ(events.choices[0].tokens.choice_index, 3);
  EXPECT_EQ(events.choices[0].finished->choice_index, 3);
  EXPECT_FALSE(events.request_done);
  first.OnFinished(Finished(engine::FinishReason::kEos, 3, 0));
  EXPECT_TRUE(queue->finished());
  events = queue->Take(absl::ZeroDuration());
  ASSERT_EQ(events.choices.size(), 1u);
  EXPECT_EQ(events.choices[0].index, 0);
  EXPECT_TRUE(events.request_done);
}

}  // namespace
}  // namespace slotserve::server::http
