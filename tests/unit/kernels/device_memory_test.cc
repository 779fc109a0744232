// DeviceBuffer and the copy/fill functions on every backend under test.
#include "kernels/device_memory.h"

#include <cstdint>
#include <numeric>
#include <vector>

#include "gtest/gtest.h"
#include "tests/unit/kernels/test_backends.h"

namespace slotserve::kernels::testing {
namespace {

class DeviceMemoryTest : public ::testing::TestWithParam<Backend> {};

TEST_P(DeviceMemoryTest, CopiesAndFillsRoundTrip) {
  const Backend backend = GetParam();
  SLOTSERVE_SKIP_IF_UNAVAILABLE(backend);
  constexpr std::size_t kCount = 1001;
  auto a = DeviceBuffer::Allocate(backend, kCount * sizeof(int32_t));
  auto b = DeviceBuffer::Allocate(backend, kCount * sizeof(int32_t));
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(a->bytes(), kCount * sizeof(int32_t));
  EXPECT_EQ(a->backend(), backend);
  std::vector<int32_t> host(kCount);
  std::iota(host.begin(), host.end(), -500);
  CopyHostToDevice(backend, a->data(), host.data(), kCount * sizeof(int32_t));
  CopyDeviceToDevice(backend, b->data(), a->data(), kCount * sizeof(int32_t));
  FillZero(backend, a->data(), kCount * sizeof(int32_t));
  // Zero a middle range of b only.
  FillZero(backend, b->as<int32_t>() + 10, 5 * sizeof(int32_t));
  std::vector<int32_t> from_a(kCount, 7), from_b(kCount, 7);
  CopyDeviceToHost(backend, from_a.data(), a->data(), kCount * sizeof(int32_t));
  CopyDeviceToHost(backend, from_b.data(), b->data(), kCount * sizeof(int32_t));
  Synchronize(backend);
  EXPECT_EQ(from_a, std::vector<int32_t>(kCount, 0));
  std::vector<int32_t> want = host;
  std::fill(want.begin() + 10, want.begin() + 15, 0);
  EXPECT_EQ(from_b, want);
}

// A strided 2D copy moves `rows` rows of `row` ints between pitches and touches nothing else.
TEST_P(DeviceMemoryTest, TwoDimensionalCopyMovesOnlyTheRows) {
  const Backend backend = GetParam();
  SLOTSERVE_SKIP_IF_UNAVAILABLE(backend);
  constexpr int kRows = 5, kRow = 3, kSrcPitch = 7, kDstPitch = 4;
  std::vector<int32_t> src_host(kRows * kSrcPitch);
  std::iota(src_host.begin(), src_host.end(), 100);
  auto src = DeviceBuffer::Allocate(backend, src_host.size() * sizeof(int32_t));
  auto dst = DeviceBuffer::Allocate(backend, kRows * kDstPitch * sizeof(int32_t));
  ASSERT_TRUE(src.ok() && dst.ok());
  const std::vector<int32_t> untouched(kRows * kDstPitch, -1);
  CopyHostToDevice(backend, src->data(), src_host.data(), src_host.size() * sizeof(int32_t));
  CopyHostToDevice(backend, dst->data(), untouched.data(), untouched.size() * sizeof(int32_t));
  CopyDeviceToDevice2D(backend, dst->data(), kDstPitch * sizeof(int32_t), src->as<int32_t>() + 2,
                       kSrcPitch * sizeof(int32_t), kRow * sizeof(int32_t), kRows);
  std::vector<int32_t> got(kRows * kDstPitch);
  CopyDeviceToHost(backend, got.data(), dst->data(), got.size() * sizeof(int32_t));
  Synchronize(backend);
  std::vector<int32_t> want = untouched;
  for (int r = 0; r < kRows; ++r) {
    for (int c = 0; c < kRow; ++c) want[r * kDstPitch + c] = src_host[r * kSrcPitch + 2 + c];
  }
  EXPECT_EQ(got, want);
}

TEST_P(DeviceMemoryTest, MoveTransfersOwnership) {
  const Backend backend = GetParam();
  SLOTSERVE_SKIP_IF_UNAVAILABLE(backend);
  auto allocated = DeviceBuffer::Allocate(backend, 256);
  ASSERT_TRUE(allocated.ok()) << allocated.status();
  void* data = allocated->data();
  DeviceBuffer moved(std::move(*allocated));
  EXPECT_EQ(moved.data(), data);
  EXPECT_EQ(allocated->data(), nullptr);
  EXPECT_EQ(allocated->bytes(), 0u);
  auto other = DeviceBuffer::Allocate(backend, 64);
  ASSERT_TRUE(other.ok());
  moved = std::move(*other);  // frees the 256-byte buffer (ASan would see a leak otherwise)
  EXPECT_EQ(moved.bytes(), 64u);
}

TEST_P(DeviceMemoryTest, ZeroBytesIsAnEmptyBuffer) {
  const Backend backend = GetParam();
  SLOTSERVE_SKIP_IF_UNAVAILABLE(backend);
  auto empty = DeviceBuffer::Allocate(backend, 0);
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(empty->bytes(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Backends, DeviceMemoryTest, ::testing::ValuesIn(AllBackends()),
                         [](const auto& info) { return std::string(BackendName(info.param)); });

TEST(DeviceMemoryHostTest, HostBuffersAre64ByteAligned) {
  for (std::size_t bytes : {1u, 3u, 64u, 100u, 4096u}) {
    auto buffer = DeviceBuffer::Allocate(Backend::kCpu, bytes);
    ASSERT_TRUE(buffer.ok());
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(buffer->data()) % 64, 0u) << bytes;
  }
}

// From 2 MiB on, a host buffer starts on a huge-page boundary (so that the kernel can back it
// with huge pages) and keeps its exact size and contents.
TEST(DeviceMemoryHostTest, LargeHostBuffersStartOnAHugePage) {
  constexpr std::size_t kHugePage = std::size_t{2} << 20;
  for (std::size_t bytes : {kHugePage, kHugePage + 3, 5 * kHugePage / 2}) {
    auto buffer = DeviceBuffer::Allocate(Backend::kCpu, bytes);
    ASSERT_TRUE(buffer.ok());
    EXPECT_EQ(buffer->bytes(), bytes);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(buffer->data()) % kHugePage, 0u) << bytes;
    std::vector<uint8_t> pattern(bytes);
    for (std::size_t i = 0; i < bytes; ++i) pattern[i] = static_cast<uint8_t>(i * 7 + 1);
    CopyHostToDevice(Backend::kCpu, buffer->data(), pattern.data(), bytes);
    std::vector<uint8_t> back(bytes);
    CopyDeviceToHost(Backend::kCpu, back.data(), buffer->data(), bytes);
    EXPECT_EQ(back, pattern) << bytes;
  }
}

TEST(DeviceMemoryHostTest, CudaAllocationFailsClearlyWithoutCuda) {
  if (CudaCompiledIn()) GTEST_SKIP() << "CUDA is compiled in";
  auto buffer = DeviceBuffer::Allocate(Backend::kCuda, 16);
  ASSERT_FALSE(buffer.ok());
  EXPECT_EQ(buffer.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(buffer.status().message().find("no CUDA backend"), std::string::npos)
      << buffer.status();
}

TEST(BackendTest, NamesAndSizes) {
  EXPECT_STREQ(BackendName(Backend::kReference), "reference");
  EXPECT_STREQ(BackendName(Backend::kCpu), "cpu");
  EXPECT_STREQ(BackendName(Backend::kCuda), "cuda");
  EXPECT_STREQ(DTypeName(DType::kBF16), "BF16");
  EXPECT_EQ(DTypeSize(DType::kF32), 4u);
  EXPECT_EQ(DTypeSize(DType::kF16), 2u);
  EXPECT_EQ(DTypeSize(DType::kBF16), 2u);
  if (!CudaCompiledIn()) {
    EXPECT_FALSE(CudaDeviceAvailable());
  }
}

TEST(BackendDeathTest, CudaDispatchWithoutCudaAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // OpenBLAS may have started threads
  if (CudaCompiledIn()) GTEST_SKIP() << "CUDA is compiled in";
  EXPECT_DEATH(Dispatch(Backend::kCuda, "some_op", [](auto) {}), "some_op.*no CUDA backend");
}

}  // namespace
}  // namespace slotserve::kernels::testing
