// Streaming text: UTF-8 safety of the incremental detokenizer against a real SentencePiece
// model with byte fallback, and stop-sequence hold-back. (UTF-8 rules: tests/unit/base;
// the tokenizer itself: tokenizer_test.cc.)
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "base/utf8.h"
#include "engine/generated_text_stream.h"
#include "engine/incremental_detokenizer.h"
#include "engine/stop_sequence_matcher.h"
#include "engine/tokenizer.h"
#include "tests/unit/engine/tiny_tokenizer.h"

namespace slotserve::engine {
namespace {

using base::IsValidUtf8;
using testing::SampleTexts;
using testing::TinyTokenizerOrFail;

// Pushes ids one at a time; every delta must be valid UTF-8 on its own.
std::string StreamAll(const Tokenizer& tokenizer, const std::vector<int32_t>& ids,
                      std::vector<std::string>* deltas = nullptr) {
  IncrementalDetokenizer detokenizer(&tokenizer);
  std::string text;
  for (int32_t id : ids) {
    const std::string delta = detokenizer.Push(id);
    EXPECT_TRUE(IsValidUtf8(delta)) << "delta splits a character after id " << id;
    if (deltas != nullptr) deltas->push_back(delta);
    text += delta;
  }
  const std::string tail = detokenizer.Flush();
  EXPECT_TRUE(IsValidUtf8(tail));
  return text + tail;
}

TEST(IncrementalDetokenizerTest, DeltasConcatenateToTheWholeDecodeAndNeverSplitCharacters) {
  const Tokenizer* tokenizer = TinyTokenizerOrFail();
  if (tokenizer == nullptr) return;
  for (const std::string& text : SampleTexts()) {
    std::vector<int32_t> ids = *tokenizer->Encode(text);
    ids.insert(ids.begin(), tokenizer->bos_id());  // control pieces add no text
    std::vector<std::string> deltas;
    EXPECT_EQ(StreamAll(*tokenizer, ids, &deltas), tokenizer->Decode(ids)) << text;
  }
}

TEST(IncrementalDetokenizerTest, HoldsTheBytesOfAMultibyteCharacterUntilComplete) {
  const Tokenizer* tokenizer = TinyTokenizerOrFail();
  if (tokenizer == nullptr) return;
  const std::vector<int32_t> ids = *tokenizer->Encode("a🙂");
  std::vector<std::string> deltas;
  StreamAll(*tokenizer, ids, &deltas);
  // The emoji is four byte pieces: three empty deltas, then the whole character.
  ASSERT_GE(deltas.size(), 4u);
  const size_t n = deltas.size();
  EXPECT_EQ(deltas[n - 4], "");
  EXPECT_EQ(deltas[n - 3], "");
  EXPECT_EQ(deltas[n - 2], "");
  EXPECT_EQ(deltas[n - 1], "🙂");
}

TEST(IncrementalDetokenizerTest, RandomIdSequencesStayValidUtf8AndMatchDecode) {
  const Tokenizer* tokenizer = TinyTokenizerOrFail();
  if (tokenizer == nullptr) return;
  std::mt19937 gen(3);
  std::uniform_int_distribution<int32_t> any_id(0, tokenizer->piece_count() - 1);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<int32_t> ids(1 + trial % 17);
    for (int32_t& id : ids) id = any_id(gen);
    const std::string streamed = StreamAll(*tokenizer, ids);
    EXPECT_TRUE(IsValidUtf8(streamed));
    EXPECT_EQ(streamed, tokenizer->Decode(ids)) << "trial " << trial;
  }
}

TEST(IncrementalDetokenizerTest, APrimedPromptKeepsTheContinuationsLeadingSpace) {
  const Tokenizer* tokenizer = TinyTokenizerOrFail();
  if (tokenizer == nullptr) return;
  const std::vector<int32_t> prompt = *tokenizer->Encode("hello");
  const std::vector<int32_t> continuation = *tokenizer->Encode("world");  // "▁world"
  IncrementalDetokenizer detokenizer(tokenizer);
  detokenizer.Prime(prompt);
  std::string text;
  for (int32_t id : continuation) text += detokenizer.Push(id);
  text += detokenizer.Flush();
  EXPECT_EQ(text, " world");
}

// Found by tests/fuzz/fuzz_detokenizer: SentencePiece keeps dropping leading spaces at the
// sequence start until text appears, so after a lone "▁" the next "▁word" loses its space too.
TEST(IncrementalDetokenizerTest, ALoneSpacePieceAtTheStartDoesNotEndTheSequenceStart) {
  const Tokenizer* tokenizer = TinyTokenizerOrFail();
  if (tokenizer == nullptr) return;
  int32_t lone_space = -1, space_word = -1;
  for (int32_t id = 0; id < tokenizer->piece_count(); ++id) {
    const std::string_view piece = tokenizer->IdToPiece(id);
    if (piece == "\u2581") lone_space = id;
    if (space_word < 0 && piece.size() > 4 && piece.substr(0, 3) == "\u2581") space_word = id;
  }
  ASSERT_GE(lone_space, 0) << "the test tokenizer has no lone \"\u2581\" piece";
  ASSERT_GE(space_word, 0);
  for (const std::vector<int32_t>& ids : {std::vector<int32_t>{lone_space, space_word},
                                          {lone_space, lone_space, space_word},
                                          {lone_space, space_word, lone_space, space_word}}) {
    EXPECT_EQ(StreamAll(*tokenizer, ids), tokenizer->Decode(ids));
  }
}

TEST(StopSequenceMatcherTest, HoldsBackAPossibleStartAndNeverStreamsTheMatch) {
  StopSequenceMatcher matcher({"END"});
  std::string streamed;
  for (const char* piece : {"Hello ", "E", "N"}) {
    StopSequenceMatcher::Result r = matcher.Push(piece, true);
    EXPECT_FALSE(r.stopped);
    streamed += r.text;
  }
  EXPECT_EQ(streamed, "Hello ");  // "EN" is held back
  StopSequenceMatcher::Result r = matcher.Push("D and more", true);
  EXPECT_TRUE(r.stopped);
  EXPECT_EQ(streamed + r.text, "Hello ");
}

TEST(StopSequenceMatcherTest, ReleasesHeldTextOnceItCannotMatch) {
  StopSequenceMatcher matcher({"END"});
  EXPECT_EQ(matcher.Push("abc EN", true).text, "abc ");
  StopSequenceMatcher::Result r = matcher.Push("X", true);
  EXPECT_FALSE(r.stopped);
  EXPECT_EQ(r.text, "ENX");
  EXPECT_EQ(matcher.Push("E", true).text, "");
  EXPECT_EQ(matcher.Flush(), "E");
}

TEST(StopSequenceMatcherTest, EarliestMatchWinsAcrossSequences) {
  StopSequenceMatcher matcher({"world", "lo w"});
  StopSequenceMatcher::Result r = matcher.Push("hello world", true);
  EXPECT_TRUE(r.stopped);
  EXPECT_EQ(r.text, "hel");
}

TEST(StopSequenceMatcherTest, MatchesBeforeMinNewTokensAreOrdinaryText) {
  StopSequenceMatcher matcher({"END"});
  StopSequenceMatcher::Result r = matcher.Push("a END b EN", false);
  EXPECT_FALSE(r.stopped);
  EXPECT_EQ(r.text, "a END b ");
  r = matcher.Push("D", true);
  EXPECT_TRUE(r.stopped);
  EXPECT_EQ(r.text, "");
}

TEST(StopSequenceMatcherTest, MultibyteStopSequenceHoldBackKeepsCharactersWhole) {
  StopSequenceMatcher matcher({"日本"});
  StopSequenceMatcher::Result r = matcher.Push("abc日", true);
  EXPECT_EQ(r.text, "abc");
  r = matcher.Push("x", true);
  EXPECT_EQ(r.text, "日x");
  EXPECT_TRUE(IsValidUtf8(r.text));
}

TEST(GeneratedTextStreamTest, StopSequenceAcrossTokensCutsTheText) {
  const Tokenizer* tokenizer = TinyTokenizerOrFail();
  if (tokenizer == nullptr) return;
  const std::vector<int32_t> prompt = {tokenizer->bos_id()};
  GeneratedTextStream stream(tokenizer, prompt, {"stop here"});
  std::string streamed;
  bool stopped = false;
  const std::vector<int32_t> ids = *tokenizer->Encode("the fox will stop here and go on");
  for (int32_t id : ids) {
    GeneratedTextStream::Update update = stream.Push(id, true);
    streamed += update.text;
    if (update.stop_sequence_matched) {
      stopped = true;
      break;
    }
  }
  EXPECT_TRUE(stopped);
  EXPECT_EQ(streamed, "the fox will ");
}

TEST(GeneratedTextStreamTest, WithoutTokenizerThereIsNoText) {
  GeneratedTextStream stream(nullptr, {}, {});
  EXPECT_EQ(stream.Push(5, true).text, "");
  EXPECT_EQ(stream.Finish(), "");
}

}  // namespace
}  // namespace slotserve::engine
