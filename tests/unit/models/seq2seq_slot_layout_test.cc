// The encoder–decoder slot layout and the bytes per request it gives every golden variant,
// against sizes worked out by hand from docs/MODEL_FORMAT.md "The attention kinds" and §8 (E = 16,
// H = 2, d = 8, max_source_tokens N = 32, two decoder layers, fp32).
#include "models/seq2seq_slot_layout.h"

#include <filesystem>
#include <map>
#include <string>

#include "gtest/gtest.h"

namespace slotserve::models {
namespace {

// Decoder self state per request: abc M = 4: per head K̃, Ṽ [4 x 8] + z, m [4] = 72 floats,
// x 2 heads x 2 layers = 288 floats; softmax max_context 32: K, V [32 x 16] x 2 layers = 2048.
constexpr int64_t kAbcDecoderBytes = 288 * 4;
constexpr int64_t kSoftmaxDecoderBytes = 2048 * 4;

// Cross memory per request (shared by its beams): 1 float of source length + 2 layers x (per
// layer): softmax: K, V [32 x 16] = 1024;  abc M = 5: K̄, V̄ [5 x 16] = 160;  luna L = 4: 128;
//   rfa D = 6: per head S [12 x 8] + z [12] = 108, x 2 heads = 216;
//   srformer: K, V 1024 + KᵀV 2 x 64 + ‖K‖ 2 = 1154.
// srformer's RAF state, per hypothesis in the slot: mem 128 + R 128 + segment 2 = 258 per layer.
int64_t CrossBytes(int64_t floats_per_layer) { return (1 + 2 * floats_per_layer) * 4; }
constexpr int64_t kRafBytes = 2 * 258 * 4;

TEST(Seq2seqSlotLayoutTest, BytesPerRequestOfEveryGoldenVariant) {
  const std::map<std::string, std::pair<int64_t, int64_t>> expected = {
      {"abc_abc", {kAbcDecoderBytes, CrossBytes(160)}},
      {"abc_abc_int8", {kAbcDecoderBytes, CrossBytes(160)}},  // weights do not change the state
      {"abc_softmax", {kSoftmaxDecoderBytes, CrossBytes(160)}},
      {"convluna_conv_abc", {kAbcDecoderBytes, CrossBytes(128)}},
      {"convluna_conv_abc_int8", {kAbcDecoderBytes, CrossBytes(128)}},
      {"convluna_conv_softmax", {kSoftmaxDecoderBytes, CrossBytes(128)}},
      {"convluna_maxpool_softmax", {kSoftmaxDecoderBytes, CrossBytes(128)}},
      {"luna_abc", {kAbcDecoderBytes, CrossBytes(128)}},
      {"rfa_abc", {kAbcDecoderBytes, CrossBytes(216)}},
      {"rfa_interleave_softmax", {kSoftmaxDecoderBytes, CrossBytes(216)}},
      {"rfa_interleave_softmax_int8", {kSoftmaxDecoderBytes, CrossBytes(216)}},
      {"softmax_abc", {kAbcDecoderBytes, CrossBytes(1024)}},
      {"softmax_abc_int8", {kAbcDecoderBytes, CrossBytes(1024)}},
      {"softmax_softmax", {kSoftmaxDecoderBytes, CrossBytes(1024)}},
      {"srformer_abc", {kAbcDecoderBytes + kRafBytes, CrossBytes(1154)}},
      {"srformer_softmax", {kSoftmaxDecoderBytes + kRafBytes, CrossBytes(1154)}},
      {"srformer_softmax_int8", {kSoftmaxDecoderBytes + kRafBytes, CrossBytes(1154)}},
  };
  int checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(SLOTSERVE_GOLDEN_SEQ2SEQ_DIR)) {
    const std::string variant = entry.path().filename().string();
    auto config = LoadSeq2seqConfig(entry.path() / "config.json");
    ASSERT_TRUE(config.ok()) << config.status();
    ASSERT_TRUE(expected.contains(variant)) << variant;
    const Seq2seqShape shape = MakeSeq2seqShape(*config);
    EXPECT_EQ(shape.decoder_state_bytes, expected.at(variant).first) << variant;
    EXPECT_EQ(shape.cross_memory_bytes, expected.at(variant).second) << variant;
    EXPECT_EQ(shape.max_source_tokens, 32) << variant;
    EXPECT_EQ(shape.decoder_start_id, config->decoder_start_id) << variant;
    ++checked;
  }
  EXPECT_EQ(checked, 17);
}

TEST(Seq2seqSlotLayoutTest, PartsFollowOneAnotherWithoutOverlap) {
  auto config = LoadSeq2seqConfig(std::filesystem::path(SLOTSERVE_GOLDEN_SEQ2SEQ_DIR) /
                                  "srformer_abc" / "config.json");
  ASSERT_TRUE(config.ok()) << config.status();
  const Seq2seqSlotLayout layout = MakeSeq2seqSlotLayout(*config);
  // The slot: decoder self state, then each layer's RAF state.
  EXPECT_EQ(layout.RafLayerOffset(0), 288);
  EXPECT_EQ(layout.RafLayerOffset(1), 288 + 258);
  EXPECT_EQ(layout.slot_floats(), 288 + 2 * 258);
  // The shared cross memory block: the source length, then each layer's memory.
  EXPECT_EQ(layout.source_length_offset, 0);
  EXPECT_EQ(layout.CrossLayerOffset(0), 1);
  EXPECT_EQ(layout.CrossLayerOffset(1), 1 + 1154);
  EXPECT_EQ(layout.memory_floats(), 1 + 2 * 1154);
  EXPECT_EQ(layout.request_floats(), layout.slot_floats() + layout.memory_floats());
  EXPECT_EQ(MakeSeq2seqShape(*config).cross_kind, "srformer");
}

}  // namespace
}  // namespace slotserve::models
