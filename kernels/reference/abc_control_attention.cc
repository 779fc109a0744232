// Reference ABC controls (docs/ABC_CONTROLS.md): each token, in prefill or step, is written
// into its request's memory rows as its control says, then reads the rows; arithmetic in
// double, state stored as float. Written from the document, row by row, as the check for the
// cpu and cuda kernels.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/abc_control_attention.h"
#include "kernels/reference/host_access.h"
#include "kernels/reference/softmax_in_double.h"

namespace slotserve::kernels {
namespace {

struct HeadRows {
  float* key_sum;    // K~ [M x d]
  float* value_sum;  // V~ [M x d]
  float* z;          // [M]
};

void WriteRow(const HeadRows& rows, int d, int j, double weight, const float* k, const float* v,
              bool overwrite) {
  for (int i = 0; i < d; ++i) {
    const double old_key = overwrite ? 0.0 : rows.key_sum[j * d + i];
    const double old_value = overwrite ? 0.0 : rows.value_sum[j * d + i];
    rows.key_sum[j * d + i] = static_cast<float>(old_key + weight * k[i]);
    rows.value_sum[j * d + i] = static_cast<float>(old_value + weight * v[i]);
  }
}

// phi_t of docs/ABC_CONTROLS.md, applied to one head's rows.
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
        const double s = logits[j];
        const double alpha =
            p.control == AbcControl::kRelu ? std::max(s, 0.0) : 1.0 / (1.0 + std::exp(-s));
        rows.z[j] = static_cast<float>(rows.z[j] + alpha);
        WriteRow(rows, d, j, alpha, k, v, /*overwrite=*/false);
      }
      return;
    }
    case AbcControl::kWindow: {
      const int j = static_cast<int>(t % memory_rows);
      rows.z[j] = 1.0f;
      WriteRow(rows, d, j, 1.0, k, v, /*overwrite=*/true);
      return;
    }
    case AbcControl::kLinformer: {
      if (t >= p.max_positions) return;  // refused by the model before it gets here
      for (int j = 0; j < memory_rows; ++j) {
        const double w =
            p.linformer[(static_cast<int64_t>(h) * memory_rows + j) * p.max_positions + t];
        rows.z[j] = 1.0f;  // every row is live from the first token on
        WriteRow(rows, d, j, w, k, v, /*overwrite=*/false);
      }
      return;
    }
    case AbcControl::kCompressive: {
      const int64_t j = t / p.stride;
      if (j >= memory_rows) return;  // refused by the model before it gets here
      rows.z[j] = static_cast<float>(rows.z[j] + 1.0 / p.stride);
      WriteRow(rows, d, static_cast<int>(j), 1.0 / p.stride, k, v, /*overwrite=*/false);
      return;
    }
    case AbcControl::kRandom: {
      const int j = RandomControlRow(p.seed, p.layer, h, t, memory_rows);
      rows.z[j] = static_cast<float>(rows.z[j] + 1.0);
      WriteRow(rows, d, j, 1.0, k, v, /*overwrite=*/false);
      return;
    }
  }
}

void Read(const AbcControlParams& p, int row, int h, const HeadRows& rows) {
  const int d = p.head_dim;
  const int memory_rows = p.memory_rows;
  const float* q = p.q + row * p.in_stride + h * d;
  const bool normalises = AbcControlNormalises(p.control);
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  std::vector<double> scores(memory_rows);
  std::vector<double> divisor(memory_rows, 1.0);
  for (int j = 0; j < memory_rows; ++j) {
    if (normalises) divisor[j] = std::max(static_cast<double>(rows.z[j]), 1e-30);
    const bool live = normalises || rows.z[j] > 0.0f;
    double dot = 0.0;
    for (int i = 0; i < d; ++i) dot += static_cast<double>(rows.key_sum[j * d + i]) * q[i];
    scores[j] = live ? dot * scale / divisor[j] : -std::numeric_limits<double>::infinity();
  }
  host::SoftmaxInPlace(scores.data(), memory_rows);
  float* out = p.out + row * p.out_stride + h * d;
  for (int i = 0; i < d; ++i) {
    double sum = 0.0;
    for (int j = 0; j < memory_rows; ++j) sum += scores[j] * rows.value_sum[j * d + i] / divisor[j];
    out[i] = static_cast<float>(sum);
  }
}

void Token(const AbcControlParams& p, int row, int64_t t, float* layer_state) {
  const int64_t block = static_cast<int64_t>(p.memory_rows) * p.head_dim;
  for (int h = 0; h < p.heads; ++h) {
    float* base = layer_state + h * AbcStateFloatsPerHead(p.head_dim, p.memory_rows);
    const HeadRows rows{base, base + block, base + 2 * block};
    Write(p, row, h, t, rows);
    Read(p, row, h, rows);
  }
}

}  // namespace

template <>
void LaunchAbcControlPrefill<Backend::kReference>(const AbcControlParams& p,
                                                  const PrefillTarget& target, Stream /*stream*/) {
  float* state = host::LayerState(target.state, target.slot);
  for (int r = 0; r < p.rows; ++r) Token(p, r, target.start_position + r, state);
}

template <>
void LaunchAbcControlStep<Backend::kReference>(const AbcControlParams& p, const StepTarget& target,
                                               Stream /*stream*/) {
  for (int r = 0; r < p.rows; ++r) {
    Token(p, r, target.positions[r], host::LayerState(target.state, target.slots[r]));
  }
}

}  // namespace slotserve::kernels
