// Engine tests on the golden models (tests/golden/models: one per attention kind) on the real
// CPU backend: where a model is and a started scheduler over it.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>

#include "engine/scheduler.h"
#include "models/language_model.h"

namespace slotserve::engine::testing {

// Every attention kind's golden model, for INSTANTIATE_TEST_SUITE_P.
inline const auto kGoldenKinds =
    ::testing::Values("abc", "rfa_gate_interleave", "luna_softplus", "softmax");

inline std::filesystem::path GoldenModelDir(const std::string& name) {
  return std::filesystem::path(SLOTSERVE_SOURCE_DIR) / "tests/golden/models" / name;
}

// A started scheduler over the model in `dir` (null, with a test failure, when it fails).
inline std::unique_ptr<Scheduler> StartGoldenScheduler(const std::filesystem::path& dir,
                                                       const SchedulerOptions& options,
                                                       EngineObserver* observer = nullptr) {
  absl::StatusOr<std::unique_ptr<models::LanguageModel>> model =
      models::LanguageModel::Load(dir, kernels::Backend::kCpu);
  EXPECT_TRUE(model.ok()) << model.status();
  if (!model.ok()) return nullptr;
  absl::StatusOr<std::unique_ptr<Scheduler>> scheduler =
      Scheduler::Create(std::move(*model), nullptr, options, observer);
  EXPECT_TRUE(scheduler.ok()) << scheduler.status();
  if (!scheduler.ok()) return nullptr;
  (*scheduler)->Start();
  return std::move(*scheduler);
}

}  // namespace slotserve::engine::testing
