// The sampler's unnormalised token weights on the cpu backend, vectorised: the step's
// exponential per token was ~75% of a sampled row's ~60 µs at vocabulary 4,000 (one std::exp
// in double each). Callable from code built without AVX2 (the tests check them against
// std::exp through this).
#pragma once

namespace slotserve::kernels::cpu {

// The largest finite value of x[0, n), or -inf when none is finite.
float MaxFinite(const float* x, int n);

// weights[i] = exp((double(logits[i]) - max_logit) / temperature) for finite logits[i] (the
// difference and the division in double, as the reference computes them; the exponential
// within 2 ulp of std::exp, and 0 below e^-708), and 0 for the others; temperature > 0. And
// cumulative[i] = weights[0] + ... + weights[i], added one at a time in id order (the sums the
// draw walks). In one pass: the adds, a chain of dependent latencies, run while the
// exponentials of the next tokens are computed.
void SamplingWeightsAndCumulative(const float* logits, int n, float max_logit, float temperature,
                                  double* weights, double* cumulative);

}  // namespace slotserve::kernels::cpu
