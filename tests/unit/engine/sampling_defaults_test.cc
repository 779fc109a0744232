// generation_config.json's sampling defaults (sampling_defaults.h): what they become, and that
// they fill only the fields a request left unset, never a beam search.
#include "engine/sampling_defaults.h"

#include <gtest/gtest.h>

namespace slotserve::engine {
namespace {

models::GenerationConfig Config() {
  models::GenerationConfig config;
  config.temperature = 0.6f;
  config.top_k = 40;
  config.top_p = 0.9f;
  config.min_p = 0.05f;
  config.repetition_penalty = 1.1f;
  return config;
}

TEST(SamplingDefaultsTest, TakesTheFilesValues) {
  const SamplingDefaults defaults = SamplingDefaultsFrom(Config());
  EXPECT_EQ(defaults.temperature, 0.6f);
  EXPECT_EQ(defaults.top_k, 40);
  EXPECT_EQ(defaults.top_p, 0.9f);
  EXPECT_EQ(defaults.min_p, 0.05f);
  EXPECT_EQ(defaults.repetition_penalty, 1.1f);
  EXPECT_TRUE(SamplingDefaultsFrom({}).empty());
}

TEST(SamplingDefaultsTest, DoSampleFalseIsGreedyAndKeepsTheRepetitionPenalty) {
  models::GenerationConfig config = Config();
  config.do_sample = false;
  const SamplingDefaults defaults = SamplingDefaultsFrom(config);
  EXPECT_EQ(defaults.temperature, 0.0f);
  EXPECT_FALSE(defaults.top_k.has_value());
  EXPECT_FALSE(defaults.top_p.has_value());
  EXPECT_FALSE(defaults.min_p.has_value());
  EXPECT_EQ(defaults.repetition_penalty, 1.1f);
  config.do_sample = true;
  EXPECT_EQ(SamplingDefaultsFrom(config).temperature, 0.6f);
}

TEST(SamplingDefaultsTest, FillsOnlyTheFieldsTheRequestLeftUnset) {
  GenerationRequest request;
  request.sampling.temperature = 1.3f;  // set by the request
  request.sampling.top_k = 0;           // set by the request: "off"
  ApplySamplingDefaults(SamplingDefaultsFrom(Config()), {.temperature = true, .top_k = true},
                        &request);
  EXPECT_EQ(request.sampling.temperature, 1.3f);
  EXPECT_EQ(request.sampling.top_k, 0);
  EXPECT_EQ(request.sampling.top_p, 0.9f);
  EXPECT_EQ(request.sampling.min_p, 0.05f);
  EXPECT_EQ(request.sampling.repetition_penalty, 1.1f);
}

TEST(SamplingDefaultsTest, NoDefaultsLeaveTheBuiltInOnes) {
  GenerationRequest request;
  ApplySamplingDefaults({}, {}, &request);
  const engine::SamplingOptions built_in;
  EXPECT_EQ(request.sampling.temperature, built_in.temperature);
  EXPECT_EQ(request.sampling.top_p, built_in.top_p);
  EXPECT_EQ(request.sampling.repetition_penalty, built_in.repetition_penalty);
}

TEST(SamplingDefaultsTest, LeavesABeamSearchAlone) {
  GenerationRequest request;
  request.beam.width = 4;
  request.sampling.temperature = 0.0f;
  ApplySamplingDefaults(SamplingDefaultsFrom(Config()), {}, &request);
  EXPECT_EQ(request.sampling.temperature, 0.0f);
  EXPECT_EQ(request.sampling.top_p, 1.0f);
  EXPECT_EQ(request.sampling.repetition_penalty, 1.0f);
}

TEST(SamplingDefaultsTest, DefaultSamplingIsTheBuiltInOptionsWithTheDefaults) {
  const engine::SamplingOptions sampling = DefaultSampling({.top_k = 7});
  const engine::SamplingOptions built_in;
  EXPECT_EQ(sampling.top_k, 7);
  EXPECT_EQ(sampling.temperature, built_in.temperature);
  EXPECT_EQ(sampling.top_p, built_in.top_p);
  EXPECT_EQ(sampling.min_p, built_in.min_p);
  EXPECT_EQ(sampling.repetition_penalty, built_in.repetition_penalty);
}

TEST(SamplingDefaultsTest, DescribesTheFieldsSet) {
  EXPECT_EQ(DescribeSamplingDefaults({}), "none");
  EXPECT_EQ(DescribeSamplingDefaults({.temperature = 0.5f, .top_p = 0.75f}),
            "temperature 0.5, top_p 0.75");
}

}  // namespace
}  // namespace slotserve::engine
