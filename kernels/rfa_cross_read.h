// RFA cross attention's decode-time read (docs/ARCHITECTURE.md "Encoder–decoder models"): out =
// φ(q)ᵀS / max(φ(q)·z, eps) from a memory the step leaves untouched (beams share it). The memory
// has rfa_attention.h's per-head state layout, S [2D x d] then z [2D]; it is built at Encode by
// rfa_attention's prefill without a gate from an empty (zeroed) state, which sums φ(K_i)⊗V_i and
// φ(K_i) over the source rows.
#pragma once

#include "kernels/backend.h"
#include "kernels/recurrent_state.h"
#include "kernels/rfa_attention.h"

namespace slotserve::kernels {

// Reads params.q (k, v and gate_logits are not used) and writes params.out; row i reads the
// memory of slot target.slots[i] (target.positions is not read).
template <Backend B>
void LaunchRfaCrossRead(const RfaParams& params, const StepTarget& target, Stream stream);

inline void LaunchRfaCrossRead(Backend backend, const RfaParams& params, const StepTarget& target,
                               Stream stream = nullptr) {
  Dispatch(backend, "rfa_cross_read",
           [&](auto tag) { LaunchRfaCrossRead<decltype(tag)::value>(params, target, stream); });
}

}  // namespace slotserve::kernels
