#include "problem/validate_paged.h"

#include <algorithm>
#include <tuple>

namespace attnv {
namespace {

std::string entry(std::int64_t b, std::int64_t t) {
  return "block_table[" + std::to_string(b) + "][" + std::to_string(t) + "]";
}

}  // namespace

std::vector<std::string> check_block_table(const Problem& p, const std::int64_t* cache_len, const std::int64_t* table,
                                           std::int64_t num_pages) {
  const std::int64_t ps = p.page_size, blocks = p.shape.Tk / ps, n = p.shape.Tq;
  // (page, b, t) of every entry the call reads, sorted by page so that sharing shows as runs.
  std::vector<std::tuple<std::int64_t, std::int64_t, std::int64_t>> used;
  for (std::int64_t b = 0; b < p.shape.B; ++b) {
    const std::int64_t reads = (cache_len[b] + n + ps - 1) / ps;  // <= blocks: cache_len[b] + n <= Tk
    for (std::int64_t t = 0; t < reads; ++t) {
      const std::int64_t page = table[b * blocks + t];
      if (page < 0 || page >= num_pages)
        return {entry(b, t) + " = " + std::to_string(page) + " is not a page of the pool (num_pages = " +
                std::to_string(num_pages) + ")"};
      used.emplace_back(page, b, t);
    }
  }
  std::sort(used.begin(), used.end());
  for (std::size_t i = 0; i < used.size(); ++i) {
    const auto [page, b, t] = used[i];
    const bool shared = (i > 0 && std::get<0>(used[i - 1]) == page) ||
                        (i + 1 < used.size() && std::get<0>(used[i + 1]) == page);
    const bool appended = t >= cache_len[b] / ps;  // holds a position >= cache_len[b]: written
    if (!shared || !appended) continue;
    const auto& other = i > 0 && std::get<0>(used[i - 1]) == page ? used[i - 1] : used[i + 1];
    return {"decode: " + entry(b, t) + " = page " + std::to_string(page) + " receives appended tokens, but " +
            entry(std::get<1>(other), std::get<2>(other)) +
            " maps the same page: a page shared between table entries is read-only (append into a page of its own)"};
  }
  return {};
}

}  // namespace attnv
