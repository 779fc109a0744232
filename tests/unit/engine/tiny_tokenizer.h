// A real SentencePiece model for the tests, trained once per test binary with Debian's
// `spm_train` on generated text: small vocabulary, byte fallback on, and rare multibyte
// characters left out of the vocabulary so they come back as <0xNN> byte pieces.
#pragma once

#include <string>
#include <vector>

#include "engine/tokenizer.h"

namespace slotserve::engine::testing {

// The trained tokenizer, or nullptr when spm_train is unavailable or failed (*why says why).
const Tokenizer* TinyTokenizer(std::string* why);

// TinyTokenizer, or null after recording a test failure that says why it could not be made.
const Tokenizer* TinyTokenizerOrFail();

// Texts the tests encode: ASCII, common multibyte text, and rare characters (emoji, CJK).
const std::vector<std::string>& SampleTexts();

}  // namespace slotserve::engine::testing
