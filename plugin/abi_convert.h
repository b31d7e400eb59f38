#pragma once
// Conversions between the plugin C ABI (include/attnv_plugin.h) and attnv's own types, and the
// checks of what a plugin declares. Used on both sides of the ABI: by PluginKernel (attnv types
// -> C structs sent to the worker), by the worker (is the loaded kernel well formed?) and by the
// C++ export adapter (C structs -> KernelViews for an attnv::Kernel living in a plugin).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "attnv_plugin.h"
#include "problem/kernel.h"

namespace attnv::plugin {

// DType <-> ATTNV_F64/F32/F16/BF16. dtype_from_abi: nullopt for anything else (ATTNV_U8, junk).
std::int32_t dtype_to_abi(DType t);
std::optional<DType> dtype_from_abi(std::int32_t code);

attnv_problem problem_to_abi(const Problem& p);
// The scale is always set in the ABI; it becomes "unset" again when it equals 1/sqrt(Dk), so a
// kernel that does not claim custom_scale accepts the default.
Problem problem_from_abi(const attnv_problem& p);

// Element size of a tensor in bytes (mask: 1).
int element_bytes(const attnv_tensor& t);
attnv_tensor tensor_to_abi(const TensorRef& t, bool is_mask = false);
TensorRef tensor_from_abi(const attnv_tensor& t, DType storage);
attnv_views views_to_abi(const KernelViews& v);
KernelViews views_from_abi(const attnv_views& v, DType storage);
attnv_decode_views decode_views_to_abi(const DecodeViews& v);
DecodeViews decode_views_from_abi(const attnv_decode_views& v, DType storage);

// A decode call travels in the forward's slots (worker/protocol.h): q, k <- k_new, v <- v_new,
// kv_len <- cache_len, dk <- k_cache, dv <- v_cache, out, lse, and for a paged cache
// (p.page_size > 0) dout <- block_table as an [B, Tk / page_size] tensor of 8-byte elements.
// Packed by PluginKernel, unpacked by the worker.
attnv_views decode_in_slots(const attnv_decode_views& d, const attnv_problem& p);
attnv_decode_views decode_from_slots(const attnv_views& v);

// Capability bits <-> Capabilities, ATTNV_CAP_DECODE <-> Capabilities::decode included (the
// dtypes travel in their own bit set).
std::uint32_t caps_to_abi(const Capabilities& c);
std::uint32_t dtypes_to_abi(const std::vector<DType>& ds);
Capabilities caps_from_abi(std::uint32_t caps, std::uint32_t dtypes);
// attnv_kernel::withdrawn both ways (index ATTNV_F64..ATTNV_BF16). From the ABI, bits that are
// not capabilities are an InputError; the rest is for check_withdrawn (problem/kernel.h).
void withdrawn_to_abi(const Capabilities& c, std::uint32_t (&out)[4]);
void withdrawn_from_abi(const std::uint32_t (&w)[4], Capabilities& c);
inline bool claims_decode(std::uint32_t caps) { return (caps & ATTNV_CAP_DECODE) != 0; }

attnv_precision precision_to_abi(const PrecisionModel& m);
// What attnv passes to a plugin's precision(): struct_size set, every stage ATTNV_STAGE_AS_ACCUM.
attnv_precision precision_request();
// InputError naming `who` when a dtype is not f64/f32/f16/bf16, block < 0 or exp_ulps is not a
// finite non-negative number.
PrecisionModel precision_from_abi(const attnv_precision& m, DType storage, const std::string& who);

// The size of a version 1 attnv_kernel: version 2 appends supports and set_option to it.
inline constexpr std::size_t kKernelV1Size = offsetof(attnv_kernel, supports);
// The first version 2 attnv_kernel (up to set_option): the smallest struct_size version 2 has.
inline constexpr std::size_t kKernelV2BaseSize = offsetof(attnv_kernel, precision_for);

// What is wrong with the version and size a plugin declares ("" when this attnv reads it:
// version 1 with struct_size >= the version 1 size, as before; version 2 with exactly
// sizeof(attnv_kernel)). Nothing else of a struct can be trusted before this passes.
std::string check_kernel_header(const attnv_kernel& k, const std::string& who);
// The kernel as this attnv reads it: a version 1 struct's fields, and zero for every field it
// does not have (supports, set_option). k must pass check_kernel_header.
attnv_kernel normalized_kernel(const attnv_kernel& k);

// Everything wrong with a plugin's declaration (empty: fine). `who` starts every message:
// "plugin /x/libk.so: declares ATTNV_CAP_BACKWARD but backward is NULL".
std::vector<std::string> check_kernel(const attnv_kernel& k, const std::string& who);
// Throws InputError with the messages of check_kernel joined by "; ".
void require_valid_kernel(const attnv_kernel* k, const std::string& who);

}  // namespace attnv::plugin
