// The CUDA ABC decode step with each head's state held in registers (abc_register_step_cuda.cu).
// abc_attention_cuda.cu sends a step here when AbcRegisterStepApplies, and to the generic
// recurrent step kernel (recurrent_head.cuh, shared with prefill) otherwise.
//
// Why a second step kernel: the generic one walks the state in phases, each a chain of
// dependent global loads (z and the running max, then the key rows, then 4 value rows per
// thread one after another), so at batch 1, where a layer's launch has only a block per head,
// the step is a series of DRAM round trips. Here every thread issues all of its state loads at
// once, right after the wait for the projection that wrote q, k and v: one round trip. Large
// grids keep the generic kernel, which was faster there (its blocks shrink with the grid).
#pragma once

#include <cuda_runtime.h>

#include "kernels/abc_attention.h"
#include "kernels/recurrent_state.h"

namespace slotserve::kernels::cuda {

// The widest key or value head the kernel holds (4 columns per lane).
constexpr int kAbcRegisterStepMaxDim = 128;
// The most memory rows: one warp per row in a block of at most 1024 threads.
constexpr int kAbcRegisterStepMaxMemoryRows = 32;

// True when the register step takes this step: dk, dv <= kAbcRegisterStepMaxDim, M <=
// kAbcRegisterStepMaxMemoryRows, a grid small enough (heads x rows blocks of 32 M threads
// within half the threads the GPU keeps resident: at batch 1 to 8 of a 16-head model with 32
// memory rows on an H200), and SLOTSERVE_CUDA_ABC_STEP not "generic" (set it to compare the
// two kernels, or to rule this one out).
bool AbcRegisterStepApplies(const AbcParams& p);

// The ABC step of docs/MODEL_FORMAT.md "The attention kinds" for p.rows requests, request r's state
// in slot target.slots[r]. Requires AbcRegisterStepApplies(p). Launched to overlap the kernel
// before it (programmatic_launch.cuh).
void LaunchAbcRegisterStep(const AbcParams& p, const StepTarget& target, cudaStream_t stream);

}  // namespace slotserve::kernels::cuda
