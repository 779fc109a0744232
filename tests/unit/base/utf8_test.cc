// The one UTF-8 validator (base/utf8.h): streaming hold-back and replacement, and the
// RFC 3629 rules every caller relies on (request text, stop sequences, JSON files).
#include "base/utf8.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace slotserve {
namespace {

TEST(Utf8Test, HoldsBackIncompleteCharactersAndReplacesInvalidBytes) {
  std::string out;
  // "é" = C3 A9; give only the first byte.
  EXPECT_EQ(base::AppendCompleteUtf8("a\xC3", /*at_end=*/false, &out), 1u);
  EXPECT_EQ(out, "a");
  out.clear();
  EXPECT_EQ(base::AppendCompleteUtf8("a\xC3", /*at_end=*/true, &out), 2u);
  EXPECT_EQ(out, "a\xEF\xBF\xBD");
  out.clear();
  // A stray continuation byte and a lead byte followed by ASCII.
  EXPECT_EQ(base::AppendCompleteUtf8("\x80x\xE2y", false, &out), 4u);
  EXPECT_EQ(out, "\xEF\xBF\xBDx\xEF\xBF\xBDy");
  EXPECT_TRUE(base::IsValidUtf8("h\xC3\xA9llo \xF0\x9F\x99\x82"));
  EXPECT_FALSE(base::IsValidUtf8("\xC0\xAF"));          // overlong "/"
  EXPECT_FALSE(base::IsValidUtf8("\xED\xA0\x80"));      // surrogate
  EXPECT_FALSE(base::IsValidUtf8("\xF4\x90\x80\x80"));  // above U+10FFFF
  EXPECT_FALSE(base::IsValidUtf8("\xE2\x82"));          // cut short
}

TEST(Utf8Test, FirstInvalidByteIsWhereTheFirstBadCharacterStarts) {
  EXPECT_EQ(base::FirstInvalidUtf8Byte(""), std::string_view::npos);
  EXPECT_EQ(base::FirstInvalidUtf8Byte("plain ascii"), std::string_view::npos);
  EXPECT_EQ(base::FirstInvalidUtf8Byte("h\xC3\xA9llo"), std::string_view::npos);
  EXPECT_EQ(base::FirstInvalidUtf8Byte("ab\xFF"), 2u);             // never a lead byte
  EXPECT_EQ(base::FirstInvalidUtf8Byte("a\xC3\xA9\xC0\xAF"), 3u);  // overlong after a good é
  EXPECT_EQ(base::FirstInvalidUtf8Byte("xy\xED\xA0\x80"), 2u);     // surrogate
  EXPECT_EQ(base::FirstInvalidUtf8Byte("\xF4\x90\x80\x80"), 0u);   // above U+10FFFF
  EXPECT_EQ(base::FirstInvalidUtf8Byte("abc\xE2\x82"), 3u);        // cut short at the end
  EXPECT_EQ(base::FirstInvalidUtf8Byte("\xE2\x82x"), 0u);          // bad continuation
  EXPECT_EQ(base::FirstInvalidUtf8Byte("\x80"), 0u);               // stray continuation
}

TEST(Utf8Test, ValidatorAgreesWithTheStreamingDecoderOnEveryTwoByteString) {
  // The streaming decoder and the validator are written separately; on complete input a
  // string is valid exactly when decoding it changes nothing.
  for (int a = 0; a < 256; ++a) {
    for (int b = 0; b < 256; ++b) {
      const std::string text{static_cast<char>(a), static_cast<char>(b)};
      std::string decoded;
      base::AppendCompleteUtf8(text, /*at_end=*/true, &decoded);
      ASSERT_EQ(base::IsValidUtf8(text), decoded == text) << a << " " << b;
    }
  }
}

}  // namespace
}  // namespace slotserve
