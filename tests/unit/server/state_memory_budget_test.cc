// --state-memory: byte sizes as operators write them, and the slot count a budget buys.
#include "server/state_memory_budget.h"

#include <gtest/gtest.h>

#include <limits>
#include <optional>
#include <string>

namespace slotserve::server {
namespace {

TEST(ParseByteSize, BinaryDecimalAndBareUnits) {
  const struct {
    const char* text;
    int64_t bytes;
  } cases[] = {
      {"1000000", 1000000},    {"512B", 512},         {"16GiB", 16LL << 30},
      {"16Gi", 16LL << 30},    {"16G", 16LL << 30},   {"16gib", 16LL << 30},
      {"16GB", 16000000000LL}, {"1.5GiB", 3LL << 29}, {"512MiB", 512LL << 20},
      {"512MB", 512000000LL},  {"64k", 64LL << 10},   {"64KB", 64000},
      {"2TiB", 2LL << 40},     {"2Ti", 2LL << 40},    {"1TB", 1000000000000LL},
      {" 3 MiB ", 3LL << 20},  {"0.5KiB", 512},       {"1.9B", 1},
  };
  for (const auto& c : cases) {
    absl::StatusOr<int64_t> parsed = ParseByteSize(c.text);
    ASSERT_TRUE(parsed.ok()) << c.text << ": " << parsed.status();
    EXPECT_EQ(*parsed, c.bytes) << c.text;
  }
}

TEST(ParseByteSize, RefusesWhatIsNotASize) {
  for (const char* text : {"", "lots", "GiB", "-1GiB", "16 parsecs", "0", "0.4B", "1..5G",
                           "99999999999TiB", "16GiBs"}) {
    absl::StatusOr<int64_t> parsed = ParseByteSize(text);
    ASSERT_FALSE(parsed.ok()) << text << " parsed as " << *parsed;
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(parsed.status().message().find("expected a byte size"), std::string::npos)
        << parsed.status();
    EXPECT_NE(parsed.status().message().find(std::string("\"") + text + "\""), std::string::npos)
        << parsed.status();
  }
}

TEST(SlotsForStateMemory, OneStateOfTheBudgetIsThePaddingSlot) {
  // The bundled ABC model: 266,240 state bytes per request.
  constexpr int64_t kState = 266240;
  // 17,179,869,184 / 266,240 = 64,527.6 states.
  EXPECT_EQ(*SlotsForStateMemory(16LL << 30, kState, std::nullopt), 64526);
  EXPECT_EQ(*SlotsForStateMemory(2 * kState, kState, std::nullopt), 1);
  EXPECT_EQ(*SlotsForStateMemory(3 * kState - 1, kState, std::nullopt), 1);
  EXPECT_EQ(*SlotsForStateMemory(3 * kState, kState, std::nullopt), 2);
}

TEST(SlotsForStateMemory, MaxSlotsCapsButNeverRaises) {
  EXPECT_EQ(*SlotsForStateMemory(1LL << 30, 1024, 64), 64);
  EXPECT_EQ(*SlotsForStateMemory(10 * 1024, 1024, 64), 9);
}

TEST(SlotsForStateMemory, HugeBudgetsOfTinyStatesStayAnInt) {
  EXPECT_EQ(*SlotsForStateMemory(std::numeric_limits<int64_t>::max(), 1, std::nullopt),
            std::numeric_limits<int>::max());
}

TEST(SlotsForStateMemory, ABudgetBelowTwoStatesSaysHowMuchIsNeeded) {
  absl::StatusOr<int> slots = SlotsForStateMemory(300000, 266240, std::nullopt);
  ASSERT_FALSE(slots.ok());
  EXPECT_EQ(slots.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string message(slots.status().message());
  EXPECT_NE(message.find("--state-memory=293 KiB holds 1 request state(s)"), std::string::npos)
      << message;
  EXPECT_NE(message.find("260 KiB each"), std::string::npos) << message;
  EXPECT_NE(message.find("give at least 520 KiB"), std::string::npos) << message;
}

TEST(FormatByteSize, PicksTheLargestBinaryUnit) {
  EXPECT_EQ(FormatByteSize(512), "512 B");
  EXPECT_EQ(FormatByteSize(266240), "260 KiB");
  EXPECT_EQ(FormatByteSize(3LL << 29), "1.5 GiB");
  EXPECT_EQ(FormatByteSize(16LL << 30), "16 GiB");
}

}  // namespace
}  // namespace slotserve::server
