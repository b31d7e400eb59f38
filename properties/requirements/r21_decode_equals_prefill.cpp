// Decode with a KV cache equals prefill: prefill then single tokens, and chunked prefill, give
// after every call the full prefill's rows within the bound, and the cache holds exactly the
// appended K/V (bitwise; untouched past cache_len + n); with paged_kv claimed, a third run through
// a paged cache (shuffled pages, a shared prefix page, partly filled last pages). Prompts of up
// to 40 tokens (two or three decode runs of several calls each, a reference per call); no
// production share, as a production prompt (>= 64 tokens) is what max_tk = 40 rules out.
#include "properties/checks/checks.h"
#include "properties/conformance/requirement.h"

namespace attnv::conformance {

Requirement r21_decode_equals_prefill() {
  return {
      .id = "R21",
      .property = "decode_equals_prefill",
      .statement = "decode with a KV cache equals prefill; the cache holds exactly the appended K/V",
      .mutants = {"decode_top_left", "decode_append_shifted", "paged_last_page_full", "paged_table_row0", "alibi_dropped_in_decode"},
      .needs = "decode",
      .missing = needs_claim(&Capabilities::decode, "decode"),
      .options = drawn([](generators::GenOptions& o) { o.sinks = true; o.alibi = true; o.kv_len = false; o.max_tk = 40; o.max_work = 60000; o.production_every = 0; }),
      .check = [](Kernel& k, const generators::PropertyCase& pc) { return checks::check_decode_equals_prefill(k, pc.c, pc.layout, pc.seed); },
      .cases = {40, 300, 3000},
  };
}

}  // namespace attnv::conformance
