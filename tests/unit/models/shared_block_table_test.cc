// SharedBlockTable: blocks are handed out, shared by forks and freed when their last reader
// detaches, whatever order the readers end in.
#include "models/shared_block_table.h"

#include "gtest/gtest.h"

namespace slotserve::models {
namespace {

TEST(SharedBlockTableTest, AttachShareAndDetachCountReaders) {
  SharedBlockTable table(/*num_slots=*/4, /*num_blocks=*/2);
  EXPECT_EQ(table.free_blocks(), 2);
  EXPECT_EQ(table.block_of(0), SharedBlockTable::kNone);
  auto first = table.Attach(0);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(*first, 0);  // block 0 first
  table.Share(0, 1);
  table.Share(0, 2);
  EXPECT_EQ(table.block_of(1), 0);
  EXPECT_EQ(table.readers(0), 3);
  EXPECT_EQ(table.free_blocks(), 1);
  table.Detach(0);  // the parent ends first: its children keep reading
  EXPECT_EQ(table.readers(0), 2);
  EXPECT_EQ(table.free_blocks(), 1);
  table.Detach(2);
  table.Detach(2);  // detaching twice is harmless
  table.Detach(1);
  EXPECT_EQ(table.readers(0), 0);
  EXPECT_EQ(table.free_blocks(), 2);
}

TEST(SharedBlockTableTest, ReattachingDropsTheOldBlockFirst) {
  SharedBlockTable table(3, 1);
  ASSERT_TRUE(table.Attach(0).ok());
  auto again = table.Attach(0);  // a slot encoding a new source reuses its own block
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(table.free_blocks(), 0);
  const auto none = table.Attach(1);
  EXPECT_EQ(none.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(none.status().message().find("all 1 cross memories are in use"), std::string::npos)
      << none.status();
  EXPECT_EQ(table.block_of(1), SharedBlockTable::kNone);
}

TEST(SharedBlockTableTest, SharingReplacesTheDestinationsBlock) {
  SharedBlockTable table(3, 2);
  ASSERT_TRUE(table.Attach(0).ok());
  ASSERT_TRUE(table.Attach(1).ok());
  EXPECT_EQ(table.free_blocks(), 0);
  table.Share(0, 1);  // slot 1's own block had one reader: it is freed
  EXPECT_EQ(table.free_blocks(), 1);
  EXPECT_EQ(table.block_of(1), table.block_of(0));
  table.Share(2, 1);  // slot 2 reads nothing: slot 1 ends up reading nothing too
  EXPECT_EQ(table.block_of(1), SharedBlockTable::kNone);
  EXPECT_EQ(table.readers(table.block_of(0)), 1);
  table.Share(0, 0);  // a slot shared with itself keeps its block
  EXPECT_EQ(table.readers(table.block_of(0)), 1);
}

}  // namespace
}  // namespace slotserve::models
