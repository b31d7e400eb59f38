#pragma once
// Which instruction-set path the core's f32 inner loops take (microkernels.h, row_kernels.h):
// portable C++, AVX2 + FMA + F16C, or AVX-512 (F, BW, VL, DQ) + FMA + F16C. One build carries
// all three; the CPU is asked once (cpuid, and whether the OS saves the vector state), and each
// call picks its path from ForwardOptions::isa, else the environment, else the widest the CPU has:
//
//   ATTNV_CORE_ISA=portable|avx2|avx512|avx512_bf16   forces a path for every call that does not choose one
//
// avx512_bf16 is the avx512 path plus AVX512_BF16's vdpbf16ps for the forward's Q.K^T on bf16
// storage (microkernels_avx512_bf16.cpp): a different precision model (subnormals flushed,
// CoreKernel::precision), so it is never picked unasked; `best` stops at avx512.
//
// A forced path the CPU cannot run is an InputError naming the missing features, never a
// silent fallback (a certificate must say what it certified) and never an illegal instruction.
// f64 storage always takes the portable f64 kernels: the paths differ for f32 accumulation only.
#include <optional>
#include <string>
#include <string_view>

namespace attnv::core {

enum class Isa {
  best,      // ATTNV_CORE_ISA when set, else the widest path this CPU runs
  portable,  // plain C++ (glibc exp), no FMA contraction assumed
  avx2,      // AVX2 + FMA + F16C
  avx512,    // AVX-512 F/BW/VL/DQ + FMA + F16C
  avx512_bf16,  // avx512 + AVX512_BF16 (bf16 storage: Q.K^T on vdpbf16ps); opt-in only
};

// "best", "portable", "avx2", "avx512", "avx512_bf16": the names ATTNV_CORE_ISA takes.
const char* isa_name(Isa isa);
// The features a path needs, as the provenance of a certificate names them:
// "portable", "avx2+fma+f16c", "avx512f+avx512bw+avx512vl+avx512dq+fma+f16c" (+avx512bf16).
const char* isa_features(Isa isa);
// The four path names; nullopt for anything else ("best" is not a path).
std::optional<Isa> parse_isa(std::string_view name);

// What the CPU (and the OS: XCR0 must enable the AVX and AVX-512 register state) offers.
struct CpuFeatures {
  bool x86_64 = false;  // this build's target; false: only the portable path is compiled
  bool avx2 = false, fma = false, f16c = false;
  bool avx512f = false, avx512bw = false, avx512vl = false, avx512dq = false;
  bool avx512bf16 = false;
  // The vendor, for tuning only (never for correctness): the decode's software prefetch goes to
  // L1 on Intel and to L2 on AMD, as measured on each (row_kernels_avx512.cpp).
  bool amd = false;
};
// Asked once per process.
const CpuFeatures& cpu_features();

// The features of `isa` that `cpu` lacks, comma-separated ("avx512bw, avx512vl"); empty when the
// path runs there. For a build not targeting x86-64, every SIMD path lacks "x86-64".
std::string missing_features(Isa isa, const CpuFeatures& cpu);
// The widest path `cpu` runs among portable, avx2 and avx512 (avx512_bf16 is opt-in: isa.h's top).
Isa widest_isa(const CpuFeatures& cpu);

// The path a call takes: `requested` unless it is `best`; then `env` (the value of
// ATTNV_CORE_ISA, null or empty when unset); else widest_isa(cpu). Throws InputError for an
// unknown env value, or a path `cpu` lacks (naming the missing features and where the request
// came from). Pure, so that tests can give it any CPU and any environment.
Isa resolve_isa(Isa requested, const char* env, const CpuFeatures& cpu);
// The same with this process's environment and CPU: what the core's calls do.
Isa resolve_isa(Isa requested);

}  // namespace attnv::core
