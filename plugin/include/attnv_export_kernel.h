// attnv_export_kernel.h: turn any attnv::Kernel (C++) into a plugin of attnv_plugin.h.
//
//   #include "attnv_export_kernel.h"
//   ATTNV_EXPORT_KERNEL(std::make_unique<my::FlashKernel>())
//
// in exactly one source file of a shared library (linked with attnv::plugin_abi). The factory
// expression runs once, on the first call of attnv_kernel_entry; that one kernel instance serves
// every call. C++ exceptions never cross the ABI: a throwing call returns 1 and its what() is
// the last_error text.
//
// Kernel::precision_for is exported (attnv_kernel.precision_for) only when the factory's static
// type overrides it, or is attnv::Kernel itself (a factory returning std::unique_ptr<Kernel> hides
// the type, so it is exported to be safe). A kernel that keeps the per-dtype default then costs
// attnv no extra call per case, and its certificate does not say it declares a model per problem.
// So a factory of a base class whose subclass overrides precision_for must return the subclass's
// type, or std::unique_ptr<attnv::Kernel>.
#pragma once
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "abi_convert.h"
#include "attnv_plugin.h"
#include "problem/kernel.h"
#include "problem/validate.h"

namespace attnv::plugin::exported {
namespace {  // one copy per plugin: the header belongs to one source file of one library

struct State {
  std::unique_ptr<Kernel> kernel;
  std::string name, version, configuration;
  attnv_kernel desc{};
  std::string last_error;
};

State& state() {
  static State s;
  return s;
}

template <class F>
int guarded(F&& f) {
  try {
    f();
    return 0;
  } catch (const std::exception& e) {
    state().last_error = e.what();
  } catch (...) {
    state().last_error = "unknown C++ exception";
  }
  return 1;
}

int precision(int32_t storage, attnv_precision* model) {
  return guarded([&] {
    const std::optional<DType> d = dtype_from_abi(storage);
    if (!d) throw std::invalid_argument("precision: not a storage dtype: " + std::to_string(storage));
    // Only the fields attnv's struct has (struct_size): an older attnv passes a shorter one.
    const attnv_precision m = precision_to_abi(state().kernel->precision(*d));
    std::memcpy(model, &m, std::min<std::size_t>(model->struct_size, sizeof m));
  });
}

// The model of one problem (Kernel::precision_for: the kernel's own per-problem choice, or its
// per-dtype model), as much of it as attnv's struct has.
int precision_for(const attnv_problem* p, attnv_precision* model) {
  return guarded([&] {
    const attnv_precision m = precision_to_abi(state().kernel->precision_for(problem_from_abi(*p)));
    std::memcpy(model, &m, std::min<std::size_t>(model->struct_size, sizeof m));
  });
}

// The views of a C caller, checked as attnv checks its own before every in-process call
// (problem/buffers.cpp, run_forward): an attnv::Kernel may index through them unchecked (a
// cu_seqlens bound past Tq is a read past the buffer), so a malformed call is refused, named.
// check_views and check_decode_views check the problem first.
void refuse_invalid(const std::vector<std::string>& errors, const char* what) {
  if (!errors.empty()) throw std::invalid_argument(std::string(what) + ": invalid call: " + errors[0]);
}
KernelViews checked_views(const Problem& prob, const attnv_views& v, const char* what) {
  KernelViews views = views_from_abi(v, prob.dtype);
  refuse_invalid(check_views(prob, views), what);
  return views;
}

int forward(const attnv_problem* p, const attnv_views* v) {
  return guarded([&] {
    const Problem prob = problem_from_abi(*p);
    state().kernel->forward(prob, checked_views(prob, *v, "forward"));
  });
}

int backward(const attnv_problem* p, const attnv_views* v) {
  return guarded([&] {
    const Problem prob = problem_from_abi(*p);
    state().kernel->backward(prob, checked_views(prob, *v, "backward"));
  });
}

int decode(const attnv_problem* p, const attnv_decode_views* v) {
  return guarded([&] {
    const Problem prob = problem_from_abi(*p);
    const DecodeViews views = decode_views_from_abi(*v, prob.dtype);
    refuse_invalid(check_decode_views(prob, views), "decode");
    state().kernel->decode(prob, views);
  });
}

// Kernel::supports across the ABI: 1 computed, 0 declined (the reason cut to fit `why`); a
// throwing query is a refusal (its what() is the last_error text).
int supports(const attnv_problem* p, int32_t op, char* why, uint32_t why_size) {
  Support s;
  const int rc = guarded([&] {
    const KernelOp o = op == ATTNV_OP_BACKWARD ? KernelOp::backward : op == ATTNV_OP_DECODE ? KernelOp::decode : KernelOp::forward;
    s = state().kernel->supports(problem_from_abi(*p), o);
  });
  if (rc != 0) return -1;
  if (s.ok) return 1;
  if (why && why_size > 0) std::snprintf(why, why_size, "%s", s.why.c_str());
  return 0;
}

const char* last_error() { return state().last_error.c_str(); }

// Whether the kernel type K may choose its precision model per problem (see the top).
template <class K>
constexpr bool may_choose_precision_per_problem() {
  if constexpr (std::is_same_v<K, Kernel>)
    return true;
  else  // &K::precision_for names the class that declared it: Kernel's own type when not overridden
    return !std::is_same_v<decltype(&K::precision_for), decltype(&Kernel::precision_for)>;
}

template <class Factory>
const attnv_kernel* describe(Factory&& make, const char* version) {
  using Made = typename std::invoke_result_t<Factory&>::element_type;
  static_assert(std::is_base_of_v<Kernel, Made>, "the factory must return a std::unique_ptr of an attnv::Kernel");
  State& s = state();
  if (s.kernel) return &s.desc;
  try {
    s.kernel = make();
    s.name = s.kernel->name();
    s.version = version;
    const Capabilities c = s.kernel->capabilities();
    s.desc.abi_version = ATTNV_ABI_VERSION;
    s.desc.struct_size = sizeof(attnv_kernel);
    s.desc.name = s.name.c_str();
    s.desc.version = s.version.c_str();
    s.desc.dtypes = dtypes_to_abi(c.dtypes);
    s.desc.caps = caps_to_abi(c);
    s.desc.precision = &precision;
    s.desc.forward = &forward;
    s.desc.backward = c.backward ? &backward : nullptr;
    s.desc.decode = c.decode ? &decode : nullptr;
    s.desc.last_error = &last_error;
    s.desc.supports = &supports;
    s.desc.precision_for = may_choose_precision_per_problem<Made>() ? &precision_for : nullptr;
    withdrawn_to_abi(c, s.desc.withdrawn);
    s.configuration = s.kernel->configuration();  // Kernel::configuration: the core's ATTNV_CORE_ISA path, say
    s.desc.configuration = s.configuration.c_str();
    return &s.desc;
  } catch (...) {
    s.kernel.reset();
    return nullptr;  // the loader reports "attnv_kernel_entry() returned NULL"
  }
}

}  // namespace
}  // namespace attnv::plugin::exported

#define ATTNV_EXPORT_KERNEL_VERSIONED(factory_expression, version_string)                                 \
  extern "C" ATTNV_PLUGIN_EXPORT const attnv_kernel* attnv_kernel_entry(void) {                           \
    return ::attnv::plugin::exported::describe([]() { return factory_expression; }, version_string);     \
  }
#define ATTNV_EXPORT_KERNEL(factory_expression) ATTNV_EXPORT_KERNEL_VERSIONED(factory_expression, "")
