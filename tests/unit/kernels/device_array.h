// Test data on a backend's device: host vectors uploaded through DeviceBuffer and
// CopyHostToDevice, so the same test bodies work on host and CUDA backends.
#pragma once

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/device_memory.h"

namespace slotserve::kernels::testing {

template <typename T>
class DeviceArray {
 public:
  DeviceArray(Backend backend, std::size_t count) : backend_(backend), count_(count) {
    auto buffer = DeviceBuffer::Allocate(backend, count * sizeof(T));
    EXPECT_TRUE(buffer.ok()) << buffer.status();
    if (buffer.ok()) buffer_ = std::move(*buffer);
  }
  DeviceArray(Backend backend, const std::vector<T>& host) : DeviceArray(backend, host.size()) {
    Upload(host);
  }

  void Upload(const std::vector<T>& host) {
    ASSERT_EQ(host.size(), count_);
    CopyHostToDevice(backend_, buffer_.data(), host.data(), count_ * sizeof(T));
  }
  std::vector<T> Download() const {
    std::vector<T> host(count_);
    Synchronize(backend_);
    CopyDeviceToHost(backend_, host.data(), buffer_.data(), count_ * sizeof(T));
    return host;
  }
  T* data() const { return buffer_.as<T>(); }
  std::size_t size() const { return count_; }
  Backend backend() const { return backend_; }

 private:
  Backend backend_;
  std::size_t count_;
  DeviceBuffer buffer_;
};

}  // namespace slotserve::kernels::testing
