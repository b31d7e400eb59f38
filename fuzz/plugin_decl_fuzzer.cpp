// Fuzz target: what the certifier reads from a plugin's worker process. The worker runs the
// plugin's own code, so everything it sends back is outside input:
//   * the Hello (plugin/declaration.h: name, version, capability and dtype bits, precision
//     models), read by read_declaration;
//   * the plugin's attnv_kernel struct as the worker checks it (check_kernel), with strings and
//     bit sets taken from the bytes;
//   * the Status page its signal handler fills in (fault address, signal, access kind), turned
//     into a sentence by describe_fault against a real call layout.
// Bad input must give InputError (or a sentence), never a crash, an out-of-bounds read or UB.
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

#include "fuzz/parser_targets.h"
#include "plugin/abi_convert.h"
#include "plugin/declaration.h"
#include "plugin/fault_report.h"
#include "plugin/shared_region.h"
#include "problem/buffers.h"
#include "problem/case.h"

namespace {

using namespace attnv;

int stub_forward(const attnv_problem*, const attnv_views*) { return 0; }
int stub_backward(const attnv_problem*, const attnv_views*) { return 0; }
int stub_decode(const attnv_problem*, const attnv_decode_views*) { return 0; }

void fuzz_hello(FuzzedDataProvider& in) {
  plugin::wire::Hello h;
  const std::vector<std::uint8_t> raw = in.ConsumeBytes<std::uint8_t>(sizeof h);
  if (!raw.empty()) std::memcpy(&h, raw.data(), raw.size());
  // Mostly a Hello that passes the magic and kind checks, so the fields behind them are reached.
  if (in.ConsumeBool()) h.magic = plugin::wire::kMagic;
  fuzz::expect_only_input_errors([&] { (void)plugin::read_declaration(h, "plugin fuzz"); });
  (void)plugin::received_text(h.text);
}

void fuzz_kernel_struct(FuzzedDataProvider& in) {
  const std::string name = in.ConsumeRandomLengthString(64);
  const std::string version = in.ConsumeRandomLengthString(64);
  attnv_kernel k{};
  k.abi_version = in.ConsumeBool() ? ATTNV_ABI_VERSION : in.ConsumeIntegral<std::uint32_t>();
  k.struct_size = in.ConsumeBool() ? sizeof(attnv_kernel) : in.ConsumeIntegral<std::uint32_t>();
  const std::uint8_t present = in.ConsumeIntegral<std::uint8_t>();
  k.name = present & 1 ? name.c_str() : nullptr;
  k.version = present & 2 ? version.c_str() : nullptr;
  k.forward = present & 4 ? stub_forward : nullptr;
  k.backward = present & 8 ? stub_backward : nullptr;
  k.decode = present & 16 ? stub_decode : nullptr;
  k.dtypes = in.ConsumeIntegral<std::uint32_t>();
  k.caps = in.ConsumeIntegral<std::uint32_t>();
  fuzz::expect_only_input_errors([&] { plugin::require_valid_kernel(&k, "plugin fuzz"); });
  attnv_precision m{};
  m.accum = in.ConsumeIntegral<std::int32_t>();
  m.p_dtype = in.ConsumeIntegral<std::int32_t>();
  m.out = in.ConsumeIntegral<std::int32_t>();
  m.block = in.ConsumeIntegral<std::int64_t>();
  m.exp_ulps = in.ConsumeFloatingPoint<double>();
  const DType storage = kAllDTypes[in.ConsumeIntegralInRange<int>(0, 3)];
  fuzz::expect_only_input_errors([&] { (void)plugin::precision_from_abi(m, storage, "plugin fuzz"); });
}

void fuzz_status(FuzzedDataProvider& in) {
  // A real layout: a small problem laid out the way PluginKernel lays out a call.
  Problem p;
  p.shape = Shape{in.ConsumeIntegralInRange<std::int64_t>(1, 2), 2, 1, in.ConsumeIntegralInRange<std::int64_t>(1, 5),
                  in.ConsumeIntegralInRange<std::int64_t>(1, 5), in.ConsumeIntegralInRange<std::int64_t>(1, 9),
                  in.ConsumeIntegralInRange<std::int64_t>(1, 9)};
  p.dtype = kAllDTypes[in.ConsumeIntegralInRange<int>(0, 3)];
  p.has_mask = in.ConsumeBool();
  p.has_bias = in.ConsumeBool();
  const bool backward = in.ConsumeBool();
  const Case c = make_zero_case(p, backward);
  const Layout layout = static_cast<Layout>(in.ConsumeIntegralInRange<int>(0, 2));
  CaseBuffers buffers(c, layout, backward);
  const plugin::CallLayout l = plugin::plan_call(plugin::views_to_abi(buffers.views()), plugin::problem_to_abi(p),
                                                 backward ? plugin::wire::Op::backward : plugin::wire::Op::forward);

  plugin::wire::Status s;
  s.magic = plugin::wire::kMagic;
  s.signal = in.ConsumeIntegralInRange<int>(0, 40);
  s.si_code = in.ConsumeIntegral<std::int32_t>();
  s.access = in.ConsumeIntegral<std::int32_t>();
  s.region_base = in.ConsumeBool() ? 0x7f0000000000ull : in.ConsumeIntegral<std::uint64_t>();
  // Mostly an address in or near the region, where the search through the layout happens.
  s.fault_addr = in.ConsumeBool() ? s.region_base + in.ConsumeIntegralInRange<std::uint64_t>(0, l.total + 8192)
                                  : in.ConsumeIntegral<std::uint64_t>();
  const std::string m = plugin::describe_fault(s, l).text;
  if (m.empty()) {
    std::fprintf(stderr, "fuzz: describe_fault gave an empty sentence\n");
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  switch (in.ConsumeIntegralInRange<int>(0, 2)) {
    case 0: fuzz_hello(in); break;
    case 1: fuzz_kernel_struct(in); break;
    default: fuzz_status(in); break;
  }
  return 0;
}
