// Fuzz target: the manifest.json parser (io/manifest.h) on arbitrary text. Bad manifests must
// give InputError naming the case and key, never a crash or another exception; an accepted
// manifest renders to text that parses back to the same entries.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "fuzz/parser_targets.h"
#include "io/manifest.h"
#include "problem/validate.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace attnv::io;
  attnv::fuzz::expect_only_input_errors([&] {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const std::vector<ManifestEntry> entries = parse_manifest(text, "fuzz/manifest.json");
    for (const ManifestEntry& e : entries) {
      // The parser promises validated problems and safe folder names.
      if (!attnv::check_problem(e.problem).empty() || !unsafe_dir_reason(e.dir).empty()) {
        std::fprintf(stderr, "fuzz: manifest accepted an invalid entry '%s'\n", e.id.c_str());
        std::abort();
      }
    }
    const std::vector<ManifestEntry> again = parse_manifest(render_manifest(entries), "rendered");
    bool same = again.size() == entries.size();
    for (std::size_t i = 0; same && i < entries.size(); ++i)
      same = again[i].id == entries[i].id && again[i].dir == entries[i].dir &&
             again[i].problem == entries[i].problem && again[i].has_dout == entries[i].has_dout &&
             again[i].meta_json == entries[i].meta_json;
    if (!same) {
      std::fprintf(stderr, "fuzz: manifest render/parse round trip changed the entries\n");
      std::abort();
    }
  });
  return 0;
}
