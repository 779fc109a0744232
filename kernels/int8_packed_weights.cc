#include "kernels/int8_packed_weights.h"

#include "kernels/cpu/cpu_features.h"
#include "kernels/int8_activation_blocks.h"

namespace slotserve::kernels {

bool Int8PackedGemmAvailable(Backend backend) {
  return backend == Backend::kCpu && cpu::CpuHasAvx512Vnni();
}

int64_t Int8PackedWeightBytes(int rows, int cols) {
  const int64_t groups = (rows + kInt8PackedGroup - 1) / kInt8PackedGroup;
  const int64_t padded_cols = int64_t{Int8ActivationBlocks(cols)} * kInt8ActivationBlock;
  return groups * kInt8PackedGroup * padded_cols;
}

void PackInt8Weights(const int8_t* weight, int rows, int cols, uint8_t* packed) {
  const int groups = (rows + kInt8PackedGroup - 1) / kInt8PackedGroup;
  const int quads = Int8ActivationBlocks(cols) * kInt8ActivationBlock / 4;
  for (int g = 0; g < groups; ++g) {
    for (int q = 0; q < quads; ++q) {
      for (int lane = 0; lane < kInt8PackedGroup; ++lane) {
        const int row = g * kInt8PackedGroup + lane;
        for (int k = 0; k < 4; ++k) {
          const int col = 4 * q + k;
          const int value = row < rows && col < cols ? weight[int64_t{row} * cols + col] : 0;
          *packed++ = static_cast<uint8_t>(value + 128);
        }
      }
    }
  }
}

void UnpackInt8Row(const uint8_t* packed, int cols, int row, float scale, float* out) {
  const int64_t padded_cols = int64_t{Int8ActivationBlocks(cols)} * kInt8ActivationBlock;
  // The row's group, then its lane: four bytes in each quad's 64.
  const uint8_t* lane =
      packed + row / kInt8PackedGroup * kInt8PackedGroup * padded_cols + row % kInt8PackedGroup * 4;
  for (int col = 0; col < cols; ++col) {
    out[col] = scale * static_cast<float>(lane[col / 4 * 4 * kInt8PackedGroup + col % 4] - 128);
  }
}

}  // namespace slotserve::kernels
