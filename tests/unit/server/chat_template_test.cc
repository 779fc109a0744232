// chat_template.json: the default, a model directory's own template, and its refusals.
#include "server/http/chat_template.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "absl/strings/match.h"
#include "tests/unit/engine/tiny_tokenizer.h"

namespace slotserve::server::http {
namespace {

TEST(ChatTemplateTest, DefaultIsRoleColonContentLinesThenTheAssistantPrompt) {
  const ChatTemplate chat_template = ChatTemplate::Default();
  EXPECT_EQ(chat_template.Render(
                {{"system", "Be kind."}, {"user", "Hi"}, {"assistant", "Hello"}, {"user", "Who?"}},
                /*add_generation_prompt=*/true),
            "system: Be kind.\nuser: Hi\nassistant: Hello\nuser: Who?\nassistant:");
  EXPECT_EQ(chat_template.stop(), std::vector<std::string>{"\nuser:"});
  EXPECT_EQ(chat_template.roles(), (std::vector<std::string>{"assistant", "system", "user"}));
  EXPECT_FALSE(chat_template.AcceptsRole("tool"));
  EXPECT_EQ(chat_template.origin(), "default");
}

// A SentencePiece model with the default normaliser writes a newline as a space, so the
// default "\nuser:" could never end a turn: the stop is matched as " user:" too.
TEST(ChatTemplateTest, StopsAreAlsoMatchedAsTheTokenizerWritesThem) {
  const engine::Tokenizer* tokenizer = engine::testing::TinyTokenizerOrFail();
  ASSERT_NE(tokenizer, nullptr);
  ASSERT_EQ(tokenizer->Decode(*tokenizer->Encode("the\nfox")), "the fox");
  ChatTemplate chat_template = ChatTemplate::Default();
  chat_template.AddStopsAsWrittenBy(*tokenizer);
  EXPECT_EQ(chat_template.stop(), (std::vector<std::string>{"\nuser:", " user:"}));
  chat_template.AddStopsAsWrittenBy(*tokenizer);  // no second copy
  EXPECT_EQ(chat_template.stop().size(), 2u);

  // A stop the tokenizer writes as it is stays alone.
  absl::StatusOr<ChatTemplate> parsed = ChatTemplate::Parse(
      R"({"format": "slotserve-chat-template", "format_version": 1,
          "messages": {"user": "Q: {content} "}, "stop": [" Q:"]})",
      "t.json");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  parsed->AddStopsAsWrittenBy(*tokenizer);
  EXPECT_EQ(parsed->stop(), std::vector<std::string>{" Q:"});
}

TEST(ChatTemplateTest, AFileDefinesRolesPromptAndStopAndContentIsInsertedVerbatim) {
  absl::StatusOr<ChatTemplate> parsed = ChatTemplate::Parse(
      R"({"format": "slotserve-chat-template", "format_version": 1,
          "messages": {"user": "Q: {content}\n", "assistant": "A: {content}\n"},
          "generation_prompt": "A:", "stop": ["\nQ:"]})",
      "t.json");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->Render({{"user", "say {role} and {content}"}}, true),
            "Q: say {role} and {content}\nA:");
  EXPECT_EQ(parsed->Render({{"user", "x"}}, false), "Q: x\n");
  EXPECT_FALSE(parsed->AcceptsRole("system"));
  EXPECT_EQ(parsed->stop(), std::vector<std::string>{"\nQ:"});
  EXPECT_EQ(parsed->origin(), "t.json");
}

TEST(ChatTemplateTest, MistakesAreRefusedNamingTheKey) {
  const std::string head = R"({"format": "slotserve-chat-template", "format_version": 1, )";
  struct Case {
    std::string text;
    std::string expected;
  };
  for (const Case& c : std::vector<Case>{
           {head + R"("messages": {"user": "{content}"}, "stops": []})", "unknown key \"stops\""},
           {head + R"("messages": {}})", "messages must name at least one role"},
           {head + R"("messages": {"user": 5}})", "messages.user must be a string"},
           {head + R"("messages": {"user": "x"}, "stop": [""]})", "stop[0] must not be empty"},
           {R"({"format": "jinja", "format_version": 1, "messages": {"user": "x"}})",
            "format must be \"slotserve-chat-template\""},
           {R"({"format": "slotserve-chat-template", "format_version": 2, "messages": {}})",
            "format_version must be <= 1"},
           {"{", "not valid JSON"},
       }) {
    absl::StatusOr<ChatTemplate> parsed = ChatTemplate::Parse(c.text, "t.json");
    ASSERT_FALSE(parsed.ok()) << c.text;
    EXPECT_TRUE(absl::StrContains(parsed.status().message(), c.expected)) << parsed.status();
    EXPECT_TRUE(absl::StartsWith(parsed.status().message(), "t.json: ")) << parsed.status();
  }
}

TEST(ChatTemplateTest, LoadsFromTheModelDirectoryOrFallsBackToTheDefault) {
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / "chat_template_test_model";
  std::filesystem::create_directories(dir);
  std::filesystem::remove(dir / ChatTemplate::kFileName);
  absl::StatusOr<ChatTemplate> fallback = ChatTemplate::LoadFromModelDir(dir);
  ASSERT_TRUE(fallback.ok());
  EXPECT_EQ(fallback->origin(), "default");
  std::ofstream(dir / ChatTemplate::kFileName)
      << R"({"format": "slotserve-chat-template", "format_version": 1,
             "messages": {"user": ">> {content}\n"}})";
  absl::StatusOr<ChatTemplate> loaded = ChatTemplate::LoadFromModelDir(dir);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->Render({{"user", "x"}}, true), ">> x\n");
  EXPECT_TRUE(loaded->stop().empty());
}

}  // namespace
}  // namespace slotserve::server::http
