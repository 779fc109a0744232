// The table of cross kinds (models/cross_attention_kind.h): one complete entry per
// CrossAttentionKind in enum order, config.json's kind names, and the per-hypothesis part only
// where the kind keeps one (srformer's RAF state), as the slot layout places it.
#include "models/cross_attention_kind.h"

#include <set>
#include <string>

#include "gtest/gtest.h"
#include "models/seq2seq_slot_layout.h"

namespace slotserve::models {
namespace {

constexpr CrossAttentionKind kEveryKind[] = {CrossAttentionKind::kSoftmax, CrossAttentionKind::kAbc,
                                             CrossAttentionKind::kRfa, CrossAttentionKind::kLuna,
                                             CrossAttentionKind::kSrformer};

TEST(CrossAttentionKindsTest, EveryKindHasOneCompleteEntryInEnumOrder) {
  ASSERT_EQ(CrossAttentionKinds().size(), std::size(kEveryKind));
  std::set<std::string> names;
  for (size_t i = 0; i < std::size(kEveryKind); ++i) {
    const CrossAttentionKindDescription& kind = DescribeCrossAttentionKind(kEveryKind[i]);
    EXPECT_EQ(kind.kind, kEveryKind[i]);
    EXPECT_EQ(&CrossAttentionKinds()[i], &kind);
    EXPECT_EQ(std::string(CrossAttentionKindName(kEveryKind[i])), kind.name);
    names.insert(kind.name);
    EXPECT_EQ(kind.parse_options == nullptr, kind.option_keys.empty()) << kind.name;
    EXPECT_EQ(kind.add_tensors == nullptr, kind.load_weights == nullptr) << kind.name;
    EXPECT_NE(kind.memory_floats_per_layer, nullptr) << kind.name;
    EXPECT_NE(kind.build_memory, nullptr) << kind.name;
    EXPECT_NE(kind.read_memory, nullptr) << kind.name;
  }
  EXPECT_EQ(names, (std::set<std::string>{"softmax", "abc", "rfa", "luna", "srformer"}));
}

TEST(CrossAttentionKindsTest, OnlySrformerKeepsAPartPerHypothesis) {
  Seq2seqConfig config;
  config.decoder.d_model = 32;
  config.decoder.n_heads = 4;
  config.decoder.n_layers = 3;
  config.decoder.attention.kind = AttentionKind::kAbc;
  config.decoder.attention.memory_rows = 8;
  config.max_source_tokens = 16;
  config.cross.memory_rows = 8;
  config.cross.features = 8;
  config.cross.length = 8;
  config.cross.segment = 4;
  config.cross.target_length = 16;
  for (const CrossAttentionKindDescription& kind : CrossAttentionKinds()) {
    config.cross.kind = kind.kind;
    const Seq2seqSlotLayout layout = MakeSeq2seqSlotLayout(config);
    EXPECT_EQ(layout.cross_floats_per_layer, kind.memory_floats_per_layer(config)) << kind.name;
    EXPECT_GT(layout.cross_floats_per_layer, 0) << kind.name;
    const bool srformer = kind.kind == CrossAttentionKind::kSrformer;
    EXPECT_EQ(kind.hypothesis_floats_per_layer != nullptr, srformer) << kind.name;
    EXPECT_EQ(layout.raf_floats_per_layer > 0, srformer) << kind.name;
    EXPECT_EQ(layout.slot_floats(), layout.decoder_state_floats + 3 * layout.raf_floats_per_layer)
        << kind.name;
  }
}

}  // namespace
}  // namespace slotserve::models
