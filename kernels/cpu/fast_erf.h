// The cpu backend's vectorised erf (fast_erf_avx2.h) over an array, callable from code built
// without AVX2 (the tests check it against std::erf through this).
#pragma once

namespace slotserve::kernels::cpu {

// y[i] = erf(x[i]) for i < n, to within 5e-7.
void FastErf(const float* x, float* y, int n);

}  // namespace slotserve::kernels::cpu
