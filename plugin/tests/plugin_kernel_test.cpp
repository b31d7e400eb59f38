// Each misbehaving C plugin gives its precise KernelFailure through PluginKernel; the worker is
// restarted after a failure; hangs are cut off at the timeout.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "abi_convert.h"
#include "plugin_kernel.h"
#include "shared_region.h"
#include "problem/buffers.h"
#include "problem/error.h"
#include "properties/checks/checks.h"
#include "kernels/naive_kernel.h"
#include "problem/tests/paged_call.h"
#include "test_case.h"

namespace attnv::plugin {
namespace {

using testing::small_case;

std::string failure_of(Kernel& k, const Case& c, Layout layout = Layout::bhtd) {
  try {
    CaseBuffers buf(c, layout, false);
    k.forward(c.problem, buf.views());
  } catch (const KernelFailure& e) {
    return e.what();
  }
  return "(no failure)";
}

TEST(PluginKernel, ExampleDeclaresWhatItsSourceSays) {
  PluginKernel k(PLUGIN_EXAMPLE_MINIMAL);
  EXPECT_EQ(k.name(), "example_minimal");
  EXPECT_EQ(k.version(), "1.0");
  const Capabilities c = k.capabilities();
  EXPECT_EQ(c.dtypes, (std::vector<DType>{DType::f64, DType::f32}));
  EXPECT_TRUE(c.strided);
  EXPECT_TRUE(c.lse);
  EXPECT_FALSE(c.causal_top_left || c.backward || c.gqa);
  EXPECT_FALSE(k.claims_decode());
  EXPECT_EQ(k.precision(DType::f32), PrecisionModel::natural(DType::f32));
}

TEST(PluginKernel, ExampleMatchesTheReferenceInEveryLayout) {
  PluginKernel k(PLUGIN_EXAMPLE_MINIMAL);
  for (Layout l : {Layout::bhtd, Layout::bthd, Layout::gapped}) {
    const checks::PropertyResult r = checks::check_matches_reference(k, small_case(5, 7, 8), l);
    EXPECT_TRUE(r.ok) << layout_name(l) << ": " << r;
  }
}

TEST(PluginKernel, NanInOutputIsFlaggedByMatchesReference) {
  PluginKernel k(PLUGIN_BAD_NAN_OUT);
  const Case c = small_case(4, 6, 4);
  CaseBuffers buf(c, Layout::bhtd, false);
  k.forward(c.problem, buf.views());
  EXPECT_TRUE(std::isnan(buf.outputs().out[0]));
  const checks::PropertyResult r = checks::check_matches_reference(k, c, Layout::bhtd);
  EXPECT_FALSE(r.ok) << r;
}

TEST(PluginKernel, CrashIsClassifiedAndTheWorkerRestarts) {
  PluginKernel k(PLUGIN_BAD_SEGV);
  EXPECT_EQ(failure_of(k, small_case(3, 5, 4)), "plugin segv forward: crashed with SIGSEGV at address 0x10 (write)");
  EXPECT_EQ(failure_of(k, small_case(3, 5, 4)), "plugin segv forward: crashed with SIGSEGV at address 0x10 (write)");
  const checks::PropertyResult r = checks::check_matches_reference(k, small_case(2, 5, 4), Layout::bhtd);
  EXPECT_TRUE(r.ok) << r;
  EXPECT_EQ(k.worker_starts(), 3);
}

TEST(PluginKernel, Abort) {
  PluginKernel k(PLUGIN_BAD_ABORT);
  EXPECT_EQ(failure_of(k, small_case(2, 3, 4)), "plugin abort forward: crashed with SIGABRT (abort)");
}

TEST(PluginKernel, HangIsKilledAtTheTimeout) {
  PluginOptions opt;
  opt.timeout_seconds = 0.5;
  PluginKernel k(PLUGIN_BAD_HANG, opt);
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(failure_of(k, small_case(2, 3, 4)), "plugin hang forward: hung: no answer within 0.5 s (worker killed)");
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_GE(s, 0.5);
  EXPECT_LT(s, 1.5);
}

TEST(PluginKernel, WriteOnePastOutHitsTheGuardPage) {
  PluginKernel k(PLUGIN_BAD_OOB_WRITE);
  // out = [1,2,Tq,32] f32 ends exactly on a page: one element past it is the guard page.
  const auto page = static_cast<std::int64_t>(sysconf(_SC_PAGESIZE));
  const std::int64_t Tq = page / (2 * 32 * 4);
  const std::string bytes = std::to_string(page);
  EXPECT_EQ(failure_of(k, small_case(Tq, 3, 32)),
            "plugin oob_write forward: wrote out of bounds past the end of out: byte offset " + bytes + ", extent " +
                bytes + " bytes");
}

TEST(PluginKernel, WriteJustPastOutInsideItsPageTripsTheCanary) {
  PluginKernel k(PLUGIN_BAD_CANARY);
  // out = [1,2,3,4] f32: 96 bytes, the rest of its page is canary.
  EXPECT_EQ(failure_of(k, small_case(3, 5, 4)),
            "plugin canary forward: wrote outside its output buffers: out: first corrupted byte 0 bytes past its end "
            "(byte offset 96, extent 96 bytes)");
}

TEST(PluginKernel, WriteIntoQNamesTheElementInEveryLayout) {
  PluginKernel k(PLUGIN_BAD_WRITES_Q);
  for (Layout l : {Layout::bhtd, Layout::bthd, Layout::gapped})
    EXPECT_EQ(failure_of(k, small_case(3, 5, 4), l), "plugin writes_q forward: wrote into input q at element [0,0,1,2]")
        << layout_name(l);
}

TEST(PluginKernel, RefusalQuotesLastError) {
  PluginKernel k(PLUGIN_BAD_REFUSES);
  EXPECT_EQ(failure_of(k, small_case(2, 3, 4)),
            "plugin refuses forward: refused the call (returned 7): this kernel only runs on Tuesdays");
  EXPECT_EQ(k.worker_starts(), 1);  // a refusal is an answer: the worker lives on
}

TEST(PluginKernel, LoadErrorsAreInputErrors) {
  auto message = [](const std::string& path, PluginOptions opt = {}) -> std::string {
    try {
      PluginKernel k(path, opt);
    } catch (const InputError& e) {
      return e.what();
    }
    return "(loaded)";
  };
  EXPECT_NE(message(PLUGIN_BAD_DECLARATION).find("plugin " PLUGIN_BAD_DECLARATION ": declares ATTNV_CAP_BACKWARD but backward is NULL"),
            std::string::npos)
      << message(PLUGIN_BAD_DECLARATION);
  EXPECT_NE(message("/nonexistent/libk.so").find("no such readable file"), std::string::npos);
  // Not a shared library: dlopen's own words are quoted.
  const std::string not_so = message(__FILE__);
  EXPECT_NE(not_so.find("cannot load: "), std::string::npos) << not_so;
  EXPECT_NE(not_so.find("invalid ELF header"), std::string::npos) << not_so;
  PluginOptions opt;
  opt.worker_path = "/nonexistent/attnv-worker";
  EXPECT_NE(message(PLUGIN_EXAMPLE_MINIMAL, opt).find("plugin worker '/nonexistent/attnv-worker' cannot be run"),
            std::string::npos);
}

// The round trip keeps every bit, and what it costs per call.
TEST(PluginKernel, NaivePluginGivesTheSameBitsAsInProcessAndItsOverhead) {
  PluginKernel plugin(PLUGIN_NAIVE);
  kernels::NaiveKernel local;
  const Case c = small_case(4, 8, 8);
  CaseBuffers a(c, Layout::bhtd, false), b(c, Layout::bhtd, false);
  auto median_us = [&](Kernel& k, CaseBuffers& buf) {
    std::vector<double> t;
    for (int i = 0; i < 1000; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      k.forward(c.problem, buf.views());
      t.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    }
    std::nth_element(t.begin(), t.begin() + 500, t.end());
    return t[500];
  };
  const double in_plugin = median_us(plugin, a), in_process = median_us(local, b);
  EXPECT_EQ(a.outputs().out, b.outputs().out);
  EXPECT_EQ(a.outputs().lse, b.outputs().lse);
  std::printf("forward B=1 H=2 Tq=4 Tk=8 D=8 f32, median of 1000: plugin %.1f us, in process %.1f us, overhead %.1f us\n",
              in_plugin, in_process, in_plugin - in_process);
}

// The shared small paged call, with its never-read table entry [0][2] as padding (-1): the
// worker must not read it.
struct PagedCall : ::attnv::testing::PagedCall {
  PagedCall() { table[2] = -1; }
};

// The block table crosses to the worker and the pools come back whole: the naive kernel as a
// plugin leaves the same bits in the pools and outputs as in process. A table entry outside the
// pool is the caller's error, named before anything reaches the plugin (not the plugin's crash).
TEST(PluginKernel, PagedDecodeThroughTheWorkerGivesTheSameBitsAsInProcess) {
  PluginKernel plugin(PLUGIN_NAIVE);
  ASSERT_TRUE(plugin.capabilities().paged_kv);
  kernels::NaiveKernel local;
  PagedCall a, b;
  plugin.decode(a.p, a.v);
  local.decode(b.p, b.v);
  EXPECT_EQ(a.kp, b.kp);
  EXPECT_EQ(a.vp, b.vp);
  EXPECT_EQ(a.out, b.out);
  EXPECT_EQ(a.lse, b.lse);
  EXPECT_EQ(a.table, b.table);
  EXPECT_NE(a.kp, PagedCall().kp);  // something was appended

  PagedCall bad;
  bad.table[4] = 7;
  try {
    plugin.decode(bad.p, bad.v);
    ADD_FAILURE() << "a block table entry outside the pool was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "plugin naive decode: invalid call: block_table[1][1] = 7 is not a page of the pool (num_pages = 7)");
  }
  EXPECT_EQ(plugin.worker_starts(), 1);
}

// Where a paged call's tensors go in the shared region: the pools whole (every page, the rest of
// each last page and the unmapped pages included) and writable, the table read-only and named.
TEST(PluginKernel, PagedCallLayoutMapsThePoolsWholeAndTheTableReadOnly) {
  PagedCall c;
  const attnv_views v = decode_in_slots(decode_views_to_abi(c.v), problem_to_abi(c.p));
  const CallLayout l = plan_call(v, problem_to_abi(c.p), wire::Op::decode);
  EXPECT_STREQ(l.names[wire::dout], "block_table");
  EXPECT_EQ(l.src[wire::dout], c.table.data());
  EXPECT_EQ(l.t[wire::dout].bytes, 2 * 3 * 8);
  EXPECT_FALSE(l.t[wire::dout].writable);
  for (const int s : {wire::dk, wire::dv}) {
    EXPECT_EQ(l.t[s].bytes, static_cast<std::int64_t>(c.kp.size() * sizeof(float))) << l.names[s];  // 7 pages
    EXPECT_TRUE(l.t[s].writable) << l.names[s];
  }
  EXPECT_STREQ(l.names[wire::dk], "k_cache");
  // A contiguous call has no table slot.
  c.p.page_size = 0;
  EXPECT_LT(plan_call(decode_in_slots(decode_views_to_abi(c.v), problem_to_abi(c.p)), problem_to_abi(c.p), wire::Op::decode).t[wire::dout].offset, 0);
}

// The worked example of docs/semantics.md ("Packed variable-length sequences"), causal
// bottom-right, two heads: sequence 0 holds queries 0-1 and key 0, sequence 1 query 2 and keys 1-4.
Case packed_case(bool with_dout = false) {
  Problem p = small_case(3, 5, 4).problem;
  p.causal = true;
  p.alignment = Alignment::bottom_right;
  p.varlen_sequences = 2;
  Case c = make_zero_case(p, with_dout);
  int n = 0;
  for (auto* t : {&c.q, &c.k, &c.v, &c.dout})
    for (double& x : *t) x = std::sin(0.7 * ++n);
  round_to_storage(c);
  c.cu_seqlens_q = {0, 2, 3};
  c.cu_seqlens_k = {0, 1, 5};
  c.id = "plugin_test/packed";
  return c;
}

// cu_seqlens cross the worker in their own slots: the plugin computes the packed case bit for
// bit as the kernel does in process (and not as one unpacked sequence).
TEST(PluginKernel, NaivePluginComputesPackedSequencesAsInProcess) {
  PluginKernel plugin(PLUGIN_NAIVE);
  ASSERT_TRUE(plugin.capabilities().varlen);
  kernels::NaiveKernel local;
  const Case c = packed_case();
  for (bool backward : {false, true}) {
    const Case cb = packed_case(backward);
    const Outputs a = backward ? run_backward(plugin, cb, Layout::bthd) : run_forward(plugin, cb, Layout::bthd);
    const Outputs b = backward ? run_backward(local, cb, Layout::bthd) : run_forward(local, cb, Layout::bthd);
    EXPECT_EQ(a.out, b.out);
    EXPECT_EQ(a.lse, b.lse);
    EXPECT_EQ(a.dq, b.dq);
    EXPECT_EQ(a.dk, b.dk);
    EXPECT_EQ(a.dv, b.dv);
  }
  Case unpacked = c;
  unpacked.problem.varlen_sequences = 0;
  unpacked.cu_seqlens_q.clear();
  unpacked.cu_seqlens_k.clear();
  EXPECT_NE(run_forward(plugin, c).out, run_forward(local, unpacked).out);
}

// A plugin that does not claim ATTNV_CAP_VARLEN may have an attnv_problem that ends before
// varlen_sequences: attnv never passes it packed sequences, even past the claims check.
TEST(PluginKernel, PackedSequencesNeverReachAPluginNotClaimingThem) {
  PluginKernel k(PLUGIN_EXAMPLE_MINIMAL);  // built against the version 1 header
  ASSERT_FALSE(k.capabilities().varlen);
  Case c = packed_case();
  c.problem.causal = false;
  CaseBuffers buf(c, Layout::bhtd, false);
  try {
    k.forward(c.problem, buf.views());
    ADD_FAILURE() << "forward ran";
  } catch (const HarnessError& e) {
    EXPECT_NE(std::string(e.what()).find("does not claim ATTNV_CAP_VARLEN"), std::string::npos) << e.what();
  }
}

// The packed case with per-sequence key lengths, kv_len [S] = [1, 2]: sequence 1 uses 2 of its 4
// keys, bottom-right aligned to them.
Case seqused_case(bool with_dout = false) {
  Case c = packed_case(with_dout);
  c.problem.has_kv_len = true;
  c.kv_len = {1, 2};
  return c;
}

// kv_len [S] crosses the worker with its S entries: the naive plugin computes it bit for bit as
// in process, forward and backward (and not as if sequence 1 used all its keys).
TEST(PluginKernel, NaivePluginComputesPerSequenceKeyLengthsAsInProcess) {
  PluginKernel plugin(PLUGIN_NAIVE);
  ASSERT_TRUE(plugin.capabilities().varlen_kv_len);
  kernels::NaiveKernel local;
  for (bool backward : {false, true}) {
    const Case c = seqused_case(backward);
    const Outputs a = backward ? run_backward(plugin, c, Layout::bthd) : run_forward(plugin, c, Layout::bthd);
    const Outputs b = backward ? run_backward(local, c, Layout::bthd) : run_forward(local, c, Layout::bthd);
    EXPECT_EQ(a.out, b.out);
    EXPECT_EQ(a.lse, b.lse);
    EXPECT_EQ(a.dq, b.dq);
    EXPECT_EQ(a.dk, b.dk);
    EXPECT_EQ(a.dv, b.dv);
  }
  EXPECT_NE(run_forward(plugin, seqused_case()).out, run_forward(local, packed_case()).out);
}

// A plugin claiming varlen and kv_len but not ATTNV_CAP_VARLEN_KV_LEN was never sent the two
// together: attnv does not start now, even past the claims check (its error, not the plugin's).
TEST(PluginKernel, PerSequenceKeyLengthsNeverReachAPluginNotClaimingThem) {
  PluginKernel k(PLUGIN_SEQUSED_NOT_CLAIMED);
  ASSERT_TRUE(k.capabilities().varlen && k.capabilities().kv_len);
  ASSERT_FALSE(k.capabilities().varlen_kv_len);
  const Case c = seqused_case();
  EXPECT_EQ(k.capabilities().unsupported(c.problem), "per-sequence key lengths (varlen with kv_len)");
  CaseBuffers buf(c, Layout::bhtd, false);
  try {
    k.forward(c.problem, buf.views());
    ADD_FAILURE() << "forward ran";
  } catch (const HarnessError& e) {
    EXPECT_NE(std::string(e.what()).find("does not claim ATTNV_CAP_VARLEN_KV_LEN"), std::string::npos) << e.what();
  }
  // Packed without kv_len, and kv_len without packing, it still computes.
  kernels::NaiveKernel local;
  EXPECT_EQ(run_forward(k, packed_case()).out, run_forward(local, packed_case()).out);
}

// Likewise a paged decode for a plugin that claims decode but not ATTNV_CAP_PAGED_KV: attnv's
// error (it drew outside the claims), never a refusal charged to the plugin.
TEST(PluginKernel, APagedCacheNeverReachesAPluginNotClaimingIt) {
  PluginKernel k(PLUGIN_PAGED_NOT_CLAIMED);
  ASSERT_TRUE(k.capabilities().decode);
  ASSERT_FALSE(k.capabilities().paged_kv);
  PagedCall c;
  try {
    k.decode(c.p, c.v);
    ADD_FAILURE() << "decode ran";
  } catch (const HarnessError& e) {
    EXPECT_NE(std::string(e.what()).find("does not claim ATTNV_CAP_PAGED_KV"), std::string::npos) << e.what();
  }
  EXPECT_EQ(c.kp, PagedCall().kp);  // nothing reached the pools
}

// The export adapter checks a C caller's views before the C++ kernel indexes through them:
// malformed bounds are a refusal naming the array, never a read past the buffers.
TEST(PluginKernel, ExportedKernelRefusesMalformedBounds) {
  void* lib = dlopen(PLUGIN_NAIVE, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << dlerror();
  using Entry = const attnv_kernel* (*)();
  const attnv_kernel* k = reinterpret_cast<Entry>(dlsym(lib, ATTNV_ENTRY_SYMBOL))();
  ASSERT_NE(k, nullptr);
  const Case c = packed_case();
  CaseBuffers buf(c, Layout::bhtd, false);
  const attnv_problem p = problem_to_abi(c.problem);
  attnv_views v = views_to_abi(buf.views());
  EXPECT_EQ(k->forward(&p, &v), 0) << k->last_error();
  const std::int64_t not_from_0[] = {1, 2, 3}, decreasing[] = {0, 3, 2}, short_of_tk[] = {0, 1, 4};
  const std::pair<attnv_views, std::string> bad[] = {
      {[&] { attnv_views w = v; w.cu_seqlens_q = not_from_0; return w; }(), "cu_seqlens_q[0] = 1, expected 0"},
      {[&] { attnv_views w = v; w.cu_seqlens_q = decreasing; return w; }(),
       "cu_seqlens_q decreases: cu_seqlens_q[2] = 2 < cu_seqlens_q[1] = 3"},
      {[&] { attnv_views w = v; w.cu_seqlens_k = short_of_tk; return w; }(),
       "cu_seqlens_k[2] = 4, expected Tk = 5 (the packed total)"},
      {[&] { attnv_views w = v; w.cu_seqlens_k = nullptr; return w; }(), "cu_seqlens_k presence does not match the problem"}};
  for (const auto& b : bad) {
    EXPECT_EQ(k->forward(&p, &b.first), 1);
    EXPECT_EQ(std::string(k->last_error()), "forward: invalid call: " + b.second);
  }
  dlclose(lib);
}

}  // namespace
}  // namespace attnv::plugin

namespace attnv::plugin {
namespace {

std::string load_error(const std::string& path, PluginOptions opt = {}) {
  try {
    PluginKernel k(path, opt);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(loaded)";
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Each malformed version 2 declaration is an input error naming the plugin and what is wrong.
TEST(PluginKernelV2, MalformedDeclarationsAreInputErrorsSayingWhatIsWrong) {
  const std::string small = load_error(PLUGIN_V2_MALFORMED_TOO_SMALL);
  EXPECT_TRUE(has(small, "plugin " PLUGIN_V2_MALFORMED_TOO_SMALL ": ABI version 2 with struct_size ")) << small;
  EXPECT_TRUE(has(small, "smaller than the version 2 attnv_kernel")) << small;
  EXPECT_TRUE(has(small, "this is the version 1 size")) << small;
  const std::string large = load_error(PLUGIN_V2_MALFORMED_TOO_LARGE);
  EXPECT_TRUE(has(large, "plugin " PLUGIN_V2_MALFORMED_TOO_LARGE ": ABI version 2 with struct_size ")) << large;
  EXPECT_TRUE(has(large, "larger than the version 2 attnv_kernel")) << large;
  const std::string version = load_error(PLUGIN_V2_MALFORMED_VERSION);
  EXPECT_TRUE(has(version, "plugin " PLUGIN_V2_MALFORMED_VERSION ": ABI version 3; this attnv reads versions 1 and 2")) << version;
  // Cut, a configuration would name other code: refused whole.
  const std::string longer = load_error(PLUGIN_V2_MALFORMED_LONG_CONFIGURATION);
  EXPECT_TRUE(has(longer, "attnv_kernel::configuration is 2000 bytes, longer than 1023")) << longer;
}

// The plugin's own configuration crosses the worker, before attnv's --kernel-option flags: the
// core exported as a plugin names the path its worker runs (the worker inherits the
// environment), so a failure recorded on one path is never re-judged on another.
TEST(PluginKernelV2, ThePluginsOwnConfigurationComesFromItsWorker) {
  ASSERT_EQ(setenv("ATTNV_CORE_ISA", "portable", 1), 0);
  const std::string forced = PluginKernel(PLUGIN_CORE).configuration();
  ASSERT_EQ(unsetenv("ATTNV_CORE_ISA"), 0);
  EXPECT_EQ(forced, "ATTNV_CORE_ISA=portable");
  const std::string by_cpu = PluginKernel(PLUGIN_CORE).configuration();
  EXPECT_EQ(by_cpu.rfind("ATTNV_CORE_ISA=", 0), 0u) << by_cpu;  // the path the CPU gave, named too
  // Plugins that declare none: their options alone (a version 1 plugin has no such field).
  PluginOptions opt;
  opt.kernel_options = {{"decline", "none"}};
  EXPECT_EQ(PluginKernel(PLUGIN_V2_DECLINES, opt).configuration(), "--kernel-option decline=none");
  EXPECT_EQ(PluginKernel(PLUGIN_EXAMPLE_MINIMAL).configuration(), "");
}

TEST(PluginKernelV2, VersionsAreReadFromWhatThePluginDeclares) {
  EXPECT_EQ(PluginKernel(PLUGIN_EXAMPLE_MINIMAL).abi_version(), 1u);     // built against the released v1 header
  EXPECT_EQ(PluginKernel(PLUGIN_EXAMPLE_MINIMAL_V2).abi_version(), 2u);  // the same source against this one
  EXPECT_EQ(PluginKernel(PLUGIN_V2_DECLINES).abi_version(), 2u);
}

// supports() through the worker: a declined problem is never called (the plugin's forward would
// refuse it with "forward called with a problem supports() declined"), it throws KernelDeclined.
TEST(PluginKernelV2, DeclinedCallsAreNeverMade) {
  PluginKernel k(PLUGIN_V2_DECLINES);
  const Case odd = small_case(3, 5, 5);  // Dk = 5
  const Support s = k.supports(odd.problem, KernelOp::forward);
  EXPECT_FALSE(s.ok);
  EXPECT_EQ(s.why, "Dk = 5: only even head dimensions are compiled");
  EXPECT_FALSE(k.supports(small_case(3, 5, 4).problem, KernelOp::backward).ok);
  CaseBuffers buf(odd, Layout::bhtd, false);
  try {
    k.forward(odd.problem, buf.views());
    ADD_FAILURE() << "a declined forward returned";
  } catch (const KernelDeclined& e) {
    EXPECT_EQ(e.why(), "Dk = 5: only even head dimensions are compiled");
  }
  EXPECT_EQ(k.worker_starts(), 1);  // a decline is an answer
  const Case even = small_case(3, 5, 4);
  EXPECT_TRUE(k.supports(even.problem, KernelOp::forward).ok);
  const checks::PropertyResult r = checks::check_matches_reference(k, even, Layout::gapped);
  EXPECT_TRUE(r.ok) << r;
  // A version 1 plugin has no supports(): everything is asked of it, as before.
  PluginKernel v1(PLUGIN_EXAMPLE_MINIMAL);
  EXPECT_TRUE(v1.supports(odd.problem, KernelOp::forward).ok);
}

// The C++ export adapter exports precision_for only where the kernel's type may choose its model
// per problem: the naive kernel keeps the per-dtype default (so attnv asks no extra question per
// case, and the certificate makes no per-problem note); the C plugin that defines it has it.
TEST(PluginKernelV2, PrecisionForIsExportedOnlyWhereTheKernelDefinesIt) {
  EXPECT_FALSE(PluginKernel(PLUGIN_NAIVE).has_precision_for());
  EXPECT_TRUE(PluginKernel(PLUGIN_V2_DECLINES).has_precision_for());
}

// precision_for() through the worker: the model of each problem (exp within 4 ulps for Tq = 1);
// a plugin without it gives its per-dtype model; a failing one is the plugin's refusal.
TEST(PluginKernelV2, PrecisionIsAskedPerProblem) {
  PluginKernel k(PLUGIN_V2_DECLINES);
  EXPECT_EQ(k.precision_for(small_case(1, 5, 4).problem).exp_ulps, 4.0);
  EXPECT_EQ(k.precision_for(small_case(3, 5, 4).problem).exp_ulps, 2.0);
  EXPECT_EQ(k.precision_for(small_case(1, 5, 4).problem).storage, DType::f32);
  PluginKernel v1(PLUGIN_EXAMPLE_MINIMAL);
  EXPECT_EQ(v1.precision_for(small_case(1, 5, 4).problem), v1.precision(DType::f32));
  PluginOptions opt;
  opt.kernel_options = {{"precision", "broken"}};
  PluginKernel broken(PLUGIN_V2_DECLINES, opt);
  try {
    (void)broken.precision_for(small_case(1, 5, 4).problem);
    ADD_FAILURE() << "a failing precision_for returned";
  } catch (const KernelFailure& e) {
    EXPECT_EQ(e.kind(), FaultKind::refused);
    EXPECT_NE(std::string(e.what()).find("precision=broken"), std::string::npos) << e.what();
  }
}

TEST(PluginKernelV2, OptionsReachThePluginAndBadOnesAreInputErrors) {
  PluginOptions opt;
  opt.kernel_options = {{"decline", "none"}};
  PluginKernel k(PLUGIN_V2_DECLINES, opt);
  EXPECT_TRUE(k.supports(small_case(3, 5, 5).problem, KernelOp::forward).ok) << "decline=none was not applied";
  opt.kernel_options = {{"decline", "all"}};
  PluginKernel all(PLUGIN_V2_DECLINES, opt);
  EXPECT_EQ(all.supports(small_case(3, 5, 4).problem, KernelOp::forward).why, "this build computes nothing");

  // A supports() that answers neither 1 nor 0 broke its contract: every call is a refusal.
  opt.kernel_options = {{"decline", "broken"}};
  PluginKernel broken(PLUGIN_V2_DECLINES, opt);
  EXPECT_EQ(failure_of(broken, small_case(3, 5, 4)),
            "plugin v2_declines forward: refused the call (returned 7): supports() returned 7 (must be 1: supported, or 0: "
            "declined)");

  opt.kernel_options = {{"decline", "bogus"}};
  EXPECT_EQ(load_error(PLUGIN_V2_DECLINES, opt),
            "plugin " PLUGIN_V2_DECLINES ": rejected --kernel-option decline=bogus: decline=bogus: expected odd_dk, softcap, all, none or broken");
  opt.kernel_options = {{"colour", "red"}};
  EXPECT_TRUE(has(load_error(PLUGIN_V2_DECLINES, opt), "rejected --kernel-option colour=red: unknown option 'colour'"));
  opt.kernel_options = {{"a", "b"}};
  EXPECT_EQ(load_error(PLUGIN_EXAMPLE_MINIMAL, opt),
            "plugin " PLUGIN_EXAMPLE_MINIMAL ": takes no options (an ABI version 1 plugin), given --kernel-option a=b");
  EXPECT_EQ(load_error(PLUGIN_EXAMPLE_MINIMAL_V2, opt),
            "plugin " PLUGIN_EXAMPLE_MINIMAL_V2 ": takes no options (set_option is NULL), given --kernel-option a=b");
  EXPECT_EQ(parse_kernel_option("k=v=w"), (std::pair<std::string, std::string>{"k", "v=w"}));
  EXPECT_EQ(parse_kernel_option("k="), (std::pair<std::string, std::string>{"k", ""}));
  EXPECT_THROW(parse_kernel_option("=v"), InputError);
  EXPECT_THROW(parse_kernel_option("kv"), InputError);
}

}  // namespace
}  // namespace attnv::plugin
