// cpu random feature attention (docs/MODEL_FORMAT.md "The attention kinds"). Prefill projects the
// whole chunk's q and k onto the random features with one sgemm per head (W u for all T tokens),
// then scans the tokens; step does the same projection with dot products for each of the B
// requests.
#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/cpu/parallel_for.h"
#include "kernels/cpu/prefetch.h"
#include "kernels/cpu/random_features.h"
#include "kernels/cpu/row_products.h"
#include "kernels/cpu/vector_ops.h"
#include "kernels/reference/host_access.h"
#include "kernels/rfa_attention.h"

namespace slotserve::kernels {
namespace {

// Absorbs phi(k) (x) v into head h's state and writes phi(q)^T S / max(phi(q).z, eps).
// `next`: the state the step absorbs into after this one, prefetched over this one's features.
void RfaHeadToken(const RfaParams& p, int row, int h, float* head_state, const float* phi_k,
                  const float* phi_q, const cpu::PrefetchSpan& next = {}) {
  const int d = p.head_dim;
  const int width = 2 * p.features;
  float* sums = head_state;           // S [2D x d]
  float* z = head_state + width * d;  // [2D]
  const float* v = p.v + row * p.in_stride + h * d;
  float keep = 1.0f, add = 1.0f;
  if (p.gate_logits != nullptr) {
    keep = 1.0f / (1.0f + std::exp(-p.gate_logits[row * p.in_stride + h]));
    add = 1.0f - keep;
  }
  for (int f = 0; f < width; ++f) {
    next.Part(f, width);
    z[f] = keep * z[f] + add * phi_k[f];
    cpu::DecayAxpy(keep, add * phi_k[f], v, sums + f * d, d);
  }
  const float denominator = std::max(cpu::Dot(phi_q, z, width), p.eps);
  float* out = p.out + row * p.out_stride + h * d;
  std::fill(out, out + d, 0.0f);
  for (int f = 0; f < width; ++f) cpu::Axpy(phi_q[f] / denominator, sums + f * d, out, d);
}

int64_t HeadFloats(const RfaParams& p) { return 2LL * p.features * p.head_dim + 2LL * p.features; }

}  // namespace

template <>
void LaunchRfaPrefill<Backend::kCpu>(const RfaParams& p, const PrefillTarget& target,
                                     Stream /*stream*/) {
  if (p.rows == 0) return;
  const int d = p.head_dim;
  const int features = p.features;
  float* layer_state = host::LayerState(target.state, target.slot);
  std::vector<float> angles_k(static_cast<size_t>(p.rows) * features);
  std::vector<float> angles_q(angles_k.size());
  std::vector<float> phi_k(2 * features), phi_q(2 * features);
  for (int h = 0; h < p.heads; ++h) {
    // angles[t, f] = W_f . u_t for every token of the chunk, u = k or q (head h's columns).
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, p.rows, features, d, 1.0f, p.k + h * d,
                static_cast<int>(p.in_stride), cpu::HeadProjection(p, h), d, 0.0f, angles_k.data(),
                features);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, p.rows, features, d, 1.0f, p.q + h * d,
                static_cast<int>(p.in_stride), cpu::HeadProjection(p, h), d, 0.0f, angles_q.data(),
                features);
    float* head_state = layer_state + h * HeadFloats(p);
    for (int r = 0; r < p.rows; ++r) {
      cpu::FeaturesFromAngles(p, angles_k.data() + r * features, p.k + r * p.in_stride + h * d,
                              phi_k.data());
      cpu::FeaturesFromAngles(p, angles_q.data() + r * features, p.q + r * p.in_stride + h * d,
                              phi_q.data());
      RfaHeadToken(p, r, h, head_state, phi_k.data(), phi_q.data());
    }
  }
}

template <>
void LaunchRfaStep<Backend::kCpu>(const RfaParams& p, const StepTarget& target, Stream /*stream*/) {
  const int d = p.head_dim;
  const int features = p.features;
  // (row, head) pairs own disjoint state: split between the compute threads (parallel_for.h).
  const int pairs = p.rows * p.heads;
  const int64_t work = int64_t{pairs} * features * (4 * d + 2);
  const int64_t head_bytes = HeadFloats(p) * int64_t{sizeof(float)};
  auto head_state = [&](int pair) {
    return host::LayerState(target.state, target.slots[pair / p.heads]) +
           (pair % p.heads) * HeadFloats(p);
  };
  cpu::ParallelFor(pairs, work, [&](int begin, int end) {
    std::vector<float> angles_k(features), angles_q(features);
    std::vector<float> phi_k(2 * features), phi_q(2 * features);
    for (int pair = begin; pair < end; ++pair) {
      const int r = pair / p.heads;
      const int h = pair % p.heads;
      cpu::PrefetchSpan next;  // the next pair's head state (cpu/prefetch.h)
      if (pair + 1 < end) next = {head_state(pair + 1), head_bytes};
      const float* k = p.k + r * p.in_stride + h * d;
      const float* q = p.q + r * p.in_stride + h * d;
      const float* projection = cpu::HeadProjection(p, h);
      cpu::DotRows(k, projection, d, features, d, angles_k.data());
      cpu::DotRows(q, projection, d, features, d, angles_q.data());
      cpu::FeaturesFromAngles(p, angles_k.data(), k, phi_k.data());
      cpu::FeaturesFromAngles(p, angles_q.data(), q, phi_q.data());
      RfaHeadToken(p, r, h, head_state(pair), phi_k.data(), phi_q.data(), next);
    }
  });
}

}  // namespace slotserve::kernels
