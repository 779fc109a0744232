// Which optional instruction sets the cpu kernels may use: what the CPU reports, capped by the
// environment variable SLOTSERVE_CPU_ISA ("avx2": the AVX2 paths only, as on a CPU without
// AVX-512; unset or anything else: no cap). The cap lets one machine measure and run the paths
// another machine would take (the library's baseline, x86-64-v3, is always assumed).
#pragma once

namespace slotserve::kernels::cpu {

// AVX-512 F, VL and BW, and not capped.
bool CpuHasAvx512();

// AVX-512 VNNI with VL and BW (vpdpbusd on 256-bit registers), and not capped.
bool CpuHasAvx512Vnni();

}  // namespace slotserve::kernels::cpu
