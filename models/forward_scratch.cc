#include "models/forward_scratch.h"

#include "base/status_macros.h"

namespace slotserve::models {
namespace {

absl::Status Grow(kernels::Backend backend, kernels::DeviceBuffer& buffer, int64_t elements,
                  size_t element_bytes) {
  SLOTSERVE_ASSIGN_OR_RETURN(buffer, kernels::DeviceBuffer::Allocate(
                                         backend, static_cast<size_t>(elements) * element_bytes));
  return absl::OkStatus();
}

}  // namespace

ForwardScratch::ForwardScratch(kernels::Backend backend, ScratchWidths widths)
    : backend_(backend), widths_(widths) {}

absl::Status ForwardScratch::Reserve(int rows, int logit_rows) {
  if (rows > rows_) {
    ++generation_;  // first, so that a failure half-way still counts as a change
    const int64_t n = rows;
    SLOTSERVE_RETURN_IF_ERROR(Grow(backend_, hidden_, n * widths_.model, sizeof(float)));
    SLOTSERVE_RETURN_IF_ERROR(Grow(backend_, normed_, n * widths_.model, sizeof(float)));
    SLOTSERVE_RETURN_IF_ERROR(Grow(backend_, projections_, n * widths_.projections, sizeof(float)));
    SLOTSERVE_RETURN_IF_ERROR(Grow(backend_, attention_, n * widths_.model, sizeof(float)));
    SLOTSERVE_RETURN_IF_ERROR(Grow(backend_, ffn_, n * widths_.ffn, sizeof(float)));
    SLOTSERVE_RETURN_IF_ERROR(Grow(backend_, tokens_, n, sizeof(int32_t)));
    SLOTSERVE_RETURN_IF_ERROR(Grow(backend_, embed_positions_, n, sizeof(int32_t)));
    SLOTSERVE_RETURN_IF_ERROR(Grow(backend_, slots_, n, sizeof(int32_t)));
    SLOTSERVE_RETURN_IF_ERROR(Grow(backend_, positions_, n, sizeof(int32_t)));
    rows_ = rows;
  }
  if (logit_rows > logit_rows_) {
    ++generation_;
    SLOTSERVE_RETURN_IF_ERROR(
        Grow(backend_, logits_, static_cast<int64_t>(logit_rows) * widths_.vocab, sizeof(float)));
    logit_rows_ = logit_rows;
  }
  return absl::OkStatus();
}

}  // namespace slotserve::models
