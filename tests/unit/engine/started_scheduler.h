// A scheduler over `model` with no tokenizer, started; null (the test already failed) when
// Create refuses the options.
#pragma once

#include <gtest/gtest.h>

#include <memory>

#include "engine/scheduler.h"
#include "models/language_model.h"

namespace slotserve::engine::testing {

inline std::unique_ptr<Scheduler> StartedScheduler(std::unique_ptr<models::LanguageModel> model,
                                                   const SchedulerOptions& options) {
  absl::StatusOr<std::unique_ptr<Scheduler>> scheduler =
      Scheduler::Create(std::move(model), /*tokenizer=*/nullptr, options);
  EXPECT_TRUE(scheduler.ok()) << scheduler.status();
  if (!scheduler.ok()) return nullptr;
  (*scheduler)->Start();
  return *std::move(scheduler);
}

}  // namespace slotserve::engine::testing
