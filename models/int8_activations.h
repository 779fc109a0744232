// Whether linear layers with int8 weights also quantise their inputs to int8 and multiply int8
// by int8 (kernels::LinearParams::int8_activations; the blocks and rounding are
// kernels/int8_activation_blocks.h). One setting for the process, like the compute threads
// (base/compute_threads.h): the server's --int8-activations, the benchmark's and
// slotserve-perplexity's flag of the same name. Off by default, so an int8 model computes with
// its exact dequantised weights (the golden tests' 1e-4 bar); on, decode batches run faster and
// the logits carry the activations' rounding too (docs/INT8.md).
// Models without int8 matrices are unaffected. The cuda backend does not implement it: the
// server refuses the flag there.
#pragma once

namespace slotserve::models {

void SetInt8Activations(bool enabled);

bool Int8Activations();

}  // namespace slotserve::models
