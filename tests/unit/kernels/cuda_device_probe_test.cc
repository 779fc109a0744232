// The CUDA device probe's classification (kernels/cuda_device_probe.h) from error codes, so
// that "no GPU" (skip, serve from the CPU) and "a GPU the runtime cannot use" (fail loudly)
// are told apart without a GPU on the machine.
#include "kernels/cuda_device_probe.h"

#include <gtest/gtest.h>

namespace slotserve::kernels {
namespace {

TEST(CudaDeviceProbeTest, DevicesFoundAreUsable) {
  const CudaProbe probe = ClassifyCudaProbe(kCudaSuccess, "cudaSuccess", "no error", 2, 13000);
  EXPECT_EQ(probe.state, CudaDeviceState::kUsable);
  EXPECT_EQ(probe.detail, "2 CUDA device(s)");
}

TEST(CudaDeviceProbeTest, NoDeviceOrNoDriverMeansNoGpu) {
  EXPECT_EQ(ClassifyCudaProbe(kCudaSuccess, "cudaSuccess", "no error", 0, 13000).state,
            CudaDeviceState::kNoDevice);
  EXPECT_EQ(ClassifyCudaProbe(kCudaErrorNoDevice, "cudaErrorNoDevice",
                              "no CUDA-capable device is detected", 0, 13000)
                .state,
            CudaDeviceState::kNoDevice);
  const CudaProbe no_driver =
      ClassifyCudaProbe(kCudaErrorInsufficientDriver, "cudaErrorInsufficientDriver",
                        "CUDA driver version is insufficient for CUDA runtime version", 0, 0);
  EXPECT_EQ(no_driver.state, CudaDeviceState::kNoDevice);
  EXPECT_NE(no_driver.detail.find("no CUDA driver is installed"), std::string::npos);
}

TEST(CudaDeviceProbeTest, ADriverTooOldIsUnusableAndSaysSo) {
  const CudaProbe old_driver =
      ClassifyCudaProbe(kCudaErrorInsufficientDriver, "cudaErrorInsufficientDriver",
                        "CUDA driver version is insufficient for CUDA runtime version", 0, 12040);
  EXPECT_EQ(old_driver.state, CudaDeviceState::kUnusable);
  EXPECT_NE(old_driver.detail.find("cudaErrorInsufficientDriver (35)"), std::string::npos)
      << old_driver.detail;
  EXPECT_NE(old_driver.detail.find("supports CUDA 12.4"), std::string::npos) << old_driver.detail;
  EXPECT_NE(old_driver.detail.find("update the driver"), std::string::npos) << old_driver.detail;
}

TEST(CudaDeviceProbeTest, EveryOtherErrorIsUnusableWithItsText) {
  // cudaErrorDevicesUnavailable (46): exclusive-process mode, taken by another process;
  // cudaErrorSystemDriverMismatch (803): kernel module and user-space driver differ.
  for (const auto& [code, name] :
       {std::pair{46, "cudaErrorDevicesUnavailable"},
        std::pair{803, "cudaErrorSystemDriverMismatch"}, std::pair{999, "cudaErrorUnknown"}}) {
    const CudaProbe probe = ClassifyCudaProbe(code, name, "some text", 0, 13000);
    EXPECT_EQ(probe.state, CudaDeviceState::kUnusable) << name;
    EXPECT_NE(probe.detail.find(name), std::string::npos) << probe.detail;
    EXPECT_NE(probe.detail.find("some text"), std::string::npos) << probe.detail;
  }
}

TEST(CudaDeviceProbeTest, StatesHaveNames) {
  EXPECT_STREQ(CudaDeviceStateName(CudaDeviceState::kNoDevice), "no CUDA device");
  EXPECT_STREQ(CudaDeviceStateName(CudaDeviceState::kUsable), "usable");
  EXPECT_STREQ(CudaDeviceStateName(CudaDeviceState::kUnusable), "present but unusable");
}

}  // namespace
}  // namespace slotserve::kernels
