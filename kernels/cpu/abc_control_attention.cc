// cpu ABC controls (docs/ABC_CONTROLS.md). The window, compressive and random controls write
// one memory row per token, so a token costs one row update plus the read; the read skips
// rows not yet live. Threading as the learned kernel: heads in prefill, (row, head)
// pairs in step, each pair's read prefetching the next pair's memory rows.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/abc_control_attention.h"
#include "kernels/cpu/parallel_for.h"
#include "kernels/cpu/prefetch.h"
#include "kernels/cpu/row_products.h"
#include "kernels/cpu/vector_ops.h"
#include "kernels/reference/host_access.h"

namespace slotserve::kernels {
namespace {

struct HeadRows {
  float* key_sum;    // K~ [M x d]
  float* value_sum;  // V~ [M x d]
  float* z;          // [M]
};

HeadRows RowsOf(const AbcControlParams& p, float* layer_state, int h) {
  const int64_t block = static_cast<int64_t>(p.memory_rows) * p.head_dim;
  float* base = layer_state + h * AbcStateFloatsPerHead(p.head_dim, p.memory_rows);
  return {base, base + block, base + 2 * block};
}

void AddToRow(const HeadRows& rows, int d, int j, float weight, const float* k, const float* v) {
  cpu::Axpy(weight, k, rows.key_sum + static_cast<int64_t>(j) * d, d);
  cpu::Axpy(weight, v, rows.value_sum + static_cast<int64_t>(j) * d, d);
}

void Write(const AbcControlParams& p, int row, int h, int64_t t, const HeadRows& rows) {
  const int d = p.head_dim;
  const int memory_rows = p.memory_rows;
  const float* k = p.k + row * p.in_stride + h * d;
  const float* v = p.v + row * p.in_stride + h * d;
  switch (p.control) {
    case AbcControl::kRelu:
    case AbcControl::kSigmoid: {
      const float* logits = p.memory_logits + row * p.in_stride + h * memory_rows;
      for (int j = 0; j < memory_rows; ++j) {
        const float s = logits[j];
        const float alpha =
            p.control == AbcControl::kRelu ? std::max(s, 0.0f) : 1.0f / (1.0f + std::exp(-s));
        rows.z[j] += alpha;
        if (alpha != 0.0f) AddToRow(rows, d, j, alpha, k, v);
      }
      return;
    }
    case AbcControl::kWindow: {
      const int j = static_cast<int>(t % memory_rows);
      rows.z[j] = 1.0f;
      std::copy(k, k + d, rows.key_sum + static_cast<int64_t>(j) * d);
      std::copy(v, v + d, rows.value_sum + static_cast<int64_t>(j) * d);
      return;
    }
    case AbcControl::kLinformer: {
      if (t >= p.max_positions) return;  // refused by the model before it gets here
      const float* column =
          p.linformer + static_cast<int64_t>(h) * memory_rows * p.max_positions + t;
      for (int j = 0; j < memory_rows; ++j) {
        rows.z[j] = 1.0f;
        AddToRow(rows, d, j, column[static_cast<int64_t>(j) * p.max_positions], k, v);
      }
      return;
    }
    case AbcControl::kCompressive: {
      const int64_t j = t / p.stride;
      if (j >= memory_rows) return;  // refused by the model before it gets here
      const float weight = 1.0f / static_cast<float>(p.stride);
      rows.z[j] += weight;
      AddToRow(rows, d, static_cast<int>(j), weight, k, v);
      return;
    }
    case AbcControl::kRandom: {
      const int j = RandomControlRow(p.seed, p.layer, h, t, memory_rows);
      rows.z[j] += 1.0f;
      AddToRow(rows, d, j, 1.0f, k, v);
      return;
    }
  }
}

// `scores` holds M floats. `next`: the rows the step reads after these (the next (request, head)
// pair's), prefetched into L2 alongside the read (row_products.h's companion rows).
void Read(const AbcControlParams& p, int row, int h, const HeadRows& rows, float* scores,
          const HeadRows* next = nullptr) {
  const int d = p.head_dim;
  const int memory_rows = p.memory_rows;
  const float* q = p.q + row * p.in_stride + h * d;
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  const bool normalises = AbcControlNormalises(p.control);
  cpu::RowPrefetch<float> keys_prefetch, values_prefetch;
  if (next != nullptr) {
    cpu::PrefetchBytes<cpu::PrefetchTo::kL2>(next->z, memory_rows * int64_t{sizeof(float)});
    keys_prefetch = {next->key_sum, memory_rows};
    values_prefetch = {next->value_sum, memory_rows};
  }
  cpu::DotRows(q, rows.key_sum, d, memory_rows, d, scores, keys_prefetch);
  for (int j = 0; j < memory_rows; ++j) {
    if (normalises) {
      scores[j] = scores[j] * scale / std::max(rows.z[j], 1e-30f);
    } else if (rows.z[j] > 0.0f) {
      scores[j] = scores[j] * scale;
    } else {
      scores[j] = -std::numeric_limits<float>::infinity();  // not live: softmax gives it 0
    }
  }
  cpu::SoftmaxInPlace(scores, memory_rows);
  if (normalises) {
    for (int j = 0; j < memory_rows; ++j) scores[j] /= std::max(rows.z[j], 1e-30f);
  }
  cpu::WeightedRowSum(scores, rows.value_sum, d, memory_rows, d, p.out + row * p.out_stride + h * d,
                      values_prefetch);
}

int64_t TokenWork(const AbcControlParams& p) {
  return static_cast<int64_t>(4) * p.memory_rows * p.head_dim;
}

}  // namespace

template <>
void LaunchAbcControlPrefill<Backend::kCpu>(const AbcControlParams& p, const PrefillTarget& target,
                                            Stream /*stream*/) {
  float* layer_state = host::LayerState(target.state, target.slot);
  cpu::ParallelFor(p.heads, TokenWork(p) * p.rows * p.heads, [&](int begin, int end) {
    std::vector<float> scores(p.memory_rows);
    for (int h = begin; h < end; ++h) {
      const HeadRows rows = RowsOf(p, layer_state, h);
      for (int r = 0; r < p.rows; ++r) {
        Write(p, r, h, target.start_position + r, rows);
        Read(p, r, h, rows, scores.data());
      }
    }
  });
}

template <>
void LaunchAbcControlStep<Backend::kCpu>(const AbcControlParams& p, const StepTarget& target,
                                         Stream /*stream*/) {
  const int pairs = p.rows * p.heads;
  auto rows_of = [&](int pair) {
    return RowsOf(p, host::LayerState(target.state, target.slots[pair / p.heads]), pair % p.heads);
  };
  cpu::ParallelFor(pairs, TokenWork(p) * pairs, [&](int begin, int end) {
    std::vector<float> scores(p.memory_rows);
    for (int pair = begin; pair < end; ++pair) {
      const int r = pair / p.heads;
      const int h = pair % p.heads;
      const HeadRows rows = rows_of(pair);
      Write(p, r, h, target.positions[r], rows);
      HeadRows next{};
      if (pair + 1 < end) next = rows_of(pair + 1);
      Read(p, r, h, rows, scores.data(), pair + 1 < end ? &next : nullptr);
    }
  });
}

}  // namespace slotserve::kernels
