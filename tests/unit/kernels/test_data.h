// Random inputs and closeness checks shared by the kernel tests.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace slotserve::kernels::testing {

// `count` uniform floats in [low, high), deterministic for a given seed.
std::vector<float> RandomFloats(std::size_t count, uint32_t seed, float low = -1.0f,
                                float high = 1.0f);
// `count` uniform ints in [low, high].
std::vector<int32_t> RandomInts(std::size_t count, uint32_t seed, int32_t low, int32_t high);

// Adds a gtest failure when |got[i] - want[i]| > tolerance * (1 + |want[i]|) anywhere (NaN
// counts as a mismatch unless both are NaN), naming the first few indices and the worst error.
void ExpectAllClose(const std::vector<float>& got, const std::vector<float>& want, float tolerance,
                    const std::string& what);

// Columns [0, cols) of each of `rows` rows of a [rows, stride] matrix, packed densely.
std::vector<float> Columns(const std::vector<float>& matrix, int rows, int64_t stride, int cols,
                           int64_t first_col = 0);

}  // namespace slotserve::kernels::testing
