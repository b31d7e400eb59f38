#include "fuzz/search/search.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <condition_variable>
#include <mutex>
#include <random>
#include <thread>

#include "fuzz/numeric/genome_mutator.h"
#include "fuzz/numeric/numeric_signal.h"
#include "problem/kernel_fault.h"

namespace attnv::fuzz {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t kMaxInputBytes = 4096;  // libFuzzer's default -max_len
constexpr int kRandomSeeds = 8;               // random genomes each searcher starts with besides the corpus

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// What the searchers share: the stop flag, the counters for the status line, the first finding.
struct Shared {
  std::atomic<bool> stop{false};
  std::atomic<std::int64_t> execs{0}, skipped{0}, declined{0};
  std::mutex mu;
  std::condition_variable cv;
  std::optional<fuzz::Finding> finding;
  fuzz::Genome genome;
  std::vector<char> buckets;       // union over searchers (status only)
  std::size_t corpus = 0;
  double best_ratio = 0;
  std::exception_ptr error;        // an error that is no input's (making the kernel)
  std::optional<std::string> attnv_error;  // attnv's error judging `genome`
};

std::vector<std::uint8_t> random_input(std::mt19937_64& rng) {
  fuzz::Genome g;
  for (auto& b : g.header) b = static_cast<std::uint8_t>(rng());
  // Mostly small cases (cheap), as the decoder's length codes favour.
  g.codes.resize(std::min<std::size_t>(fuzz::value_count(g), rng() % 64));
  for (auto& c : g.codes) c = static_cast<std::uint16_t>(rng());
  return fuzz::encode(g);
}

void searcher(int index, const KernelFactory& make, const SearchOptions& opt, Shared& sh,
              Clock::time_point deadline) {
  try {
    const std::unique_ptr<Kernel> k = make();
    const Capabilities claims = fuzz::fuzzed_claims(*k, opt.dtype);
    std::mt19937_64 rng(opt.seed + static_cast<std::uint64_t>(index));
    std::vector<std::vector<std::uint8_t>> corpus;
    std::vector<char> seen(static_cast<std::size_t>(fuzz::kSignalBuckets), 0);
    std::vector<std::vector<std::uint8_t>> queue;  // initial inputs, run before any mutation
    for (std::size_t i = static_cast<std::size_t>(index); i < opt.seeds.size(); i += static_cast<std::size_t>(opt.jobs))
      queue.push_back(opt.seeds[i]);
    for (int i = 0; i < kRandomSeeds; ++i) queue.push_back(random_input(rng));
    std::reverse(queue.begin(), queue.end());

    while (!sh.stop.load(std::memory_order_relaxed) && Clock::now() < deadline) {
      std::vector<std::uint8_t> input;
      if (!queue.empty()) {
        input = std::move(queue.back());
        queue.pop_back();
      } else if (corpus.empty()) {
        input = random_input(rng);
      } else {
        input = corpus[rng() % corpus.size()];
        // Three in four: the structure-aware edits; else byte-level edits with crossover.
        if (rng() % 4 != 0) {
          fuzz::Genome g = fuzz::decode(input.data(), input.size());
          fuzz::mutate(g, rng);
          g.codes.resize(std::min(g.codes.size(), (kMaxInputBytes - fuzz::kHeaderBytes) / 2));
          input = fuzz::encode(g);
        } else {
          const std::vector<std::uint8_t>& other = corpus[rng() % corpus.size()];
          fuzz::mutate_bytes(input, rng, &other, kMaxInputBytes);
        }
      }
      const fuzz::Genome g = fuzz::decode(input.data(), input.size());
      fuzz::Verdict v;
      try {
        v = fuzz::judge_genome(*k, g, claims, opt.judging);
      } catch (const HarnessError& e) {
        sh.execs.fetch_add(1, std::memory_order_relaxed);  // the input ran: "after N execs" counts it
        std::lock_guard lock(sh.mu);
        if (!sh.finding && !sh.attnv_error) {
          sh.attnv_error = e.what();
          sh.genome = g;
        }
        sh.stop = true;
        sh.cv.notify_all();
        return;
      }
      sh.execs.fetch_add(1, std::memory_order_relaxed);
      if (!v.judged) {
        sh.skipped.fetch_add(1, std::memory_order_relaxed);
        if (v.declined) sh.declined.fetch_add(1, std::memory_order_relaxed);
        continue;
      }
      if (v.finding) {
        std::lock_guard lock(sh.mu);
        if (!sh.finding && !sh.attnv_error) {
          sh.finding = v.finding;
          sh.genome = g;
        }
        sh.stop = true;
        sh.cv.notify_all();
        return;
      }
      bool fresh = false;
      for (std::uint16_t b : v.buckets)
        if (!seen[b]) {
          seen[b] = 1;
          fresh = true;
        }
      if (fresh || corpus.empty()) corpus.push_back(std::move(input));
      std::lock_guard lock(sh.mu);
      if (fresh) {
        ++sh.corpus;
        for (std::uint16_t b : v.buckets) sh.buckets[b] = 1;
      }
      sh.best_ratio = std::max({sh.best_ratio, v.comparison.worst_ratio(), v.decode_ratio});
    }
  } catch (...) {
    std::lock_guard lock(sh.mu);
    if (!sh.error) sh.error = std::current_exception();
    sh.stop = true;
    sh.cv.notify_all();
  }
}

SearchStatus status_of(Shared& sh, Clock::time_point t0) {
  SearchStatus s;
  s.seconds = since(t0);
  s.execs = sh.execs.load();
  s.skipped = sh.skipped.load();
  s.declined = sh.declined.load();
  std::lock_guard lock(sh.mu);
  s.corpus = sh.corpus;
  s.buckets = static_cast<std::size_t>(std::count(sh.buckets.begin(), sh.buckets.end(), 1));
  s.best_ratio = sh.best_ratio;
  return s;
}

}  // namespace

SearchResult run_search(const KernelFactory& make, const SearchOptions& opt,
                        const std::function<void(const SearchStatus&)>& on_status) {
  Shared sh;
  sh.buckets.assign(static_cast<std::size_t>(fuzz::kSignalBuckets), 0);
  const Clock::time_point t0 = Clock::now();
  const Clock::time_point deadline = t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(opt.max_seconds));
  std::vector<std::thread> threads;
  for (int i = 0; i < std::max(opt.jobs, 1); ++i)
    threads.emplace_back([&, i] { searcher(i, make, opt, sh, deadline); });
  {
    std::unique_lock lock(sh.mu);
    auto next = t0;
    while (!sh.stop && Clock::now() < deadline) {
      next += std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(opt.status_seconds));
      sh.cv.wait_until(lock, std::min(next, deadline), [&] { return sh.stop.load(); });
      if (sh.stop || Clock::now() >= deadline) break;
      lock.unlock();
      if (on_status) on_status(status_of(sh, t0));
      lock.lock();
    }
  }
  sh.stop = true;
  for (std::thread& t : threads) t.join();
  if (sh.error) std::rethrow_exception(sh.error);
  SearchResult r;
  r.finding = sh.finding;
  r.attnv_error = sh.attnv_error;
  r.genome = sh.genome;
  r.status = status_of(sh, t0);
  return r;
}

namespace {

// Candidate simplifications of a genome, most effective first.
std::vector<fuzz::Genome> candidates(const fuzz::Genome& g) {
  using namespace fuzz;
  std::vector<Genome> out;
  const auto with = [&](Field f, std::uint8_t code) {
    if (g.header[f] == code) return;
    Genome c = g;
    c.header[f] = code;
    out.push_back(std::move(c));
  };
  const Shape s = shape_of(g);
  if (s.B > 1) with(kB, 0);
  if (s.Hkv > 1) with(kHkv, 0);
  // Planes and ALiBi off, the batch and KV heads kept (their bit 0); a forward instead of a
  // decode, then the plainest decode plan (a prompt's prefill, then single tokens).
  if (g.header[kB] & 30u) with(kB, static_cast<std::uint8_t>(g.header[kB] & ~30u));
  if (g.header[kB] & kDecodeBit) with(kB, static_cast<std::uint8_t>(g.header[kB] & ~kDecodeBit & ~(3u << kDecodePlanShift)));
  if (g.header[kB] & (3u << kDecodePlanShift)) with(kB, static_cast<std::uint8_t>(g.header[kB] & ~(3u << kDecodePlanShift)));
  if (g.header[kHkv] >> 1) with(kHkv, static_cast<std::uint8_t>(g.header[kHkv] & 1));
  if (s.Hq > s.Hkv) with(kGroup, 0);
  const auto shorter = [&](Field f, std::int64_t n, std::int64_t small_max, std::int64_t big_max) {
    for (std::int64_t m : {std::int64_t{1}, n / 4, n / 2, n - 1}) {
      if (m < 1 || m >= n) continue;
      const std::uint8_t code = code_for_length(m, small_max, big_max);
      if (length_of(code, small_max, big_max) < n) with(f, code);
    }
  };
  shorter(kTq, s.Tq, kSmallT, kMaxT);
  shorter(kTk, s.Tk, kSmallT, kMaxT);
  shorter(kDk, s.Dk, kSmallD, kMaxD);
  shorter(kDv, s.Dv, kSmallD, kMaxD);
  for (int bit = 0; bit < 8; ++bit)
    if (g.header[kFlags] & (1u << bit)) with(kFlags, static_cast<std::uint8_t>(g.header[kFlags] & ~(1u << bit)));
  if (g.header[kSigns] >> kPoisonShift) with(kSigns, static_cast<std::uint8_t>(g.header[kSigns] & ((1u << kPoisonShift) - 1)));
  if (g.header[kSigns] & ((1u << kPoisonShift) - 1)) with(kSigns, static_cast<std::uint8_t>(g.header[kSigns] & ~((1u << kPoisonShift) - 1)));
  for (Field f : {kExpQ, kExpK, kExpV, kExpBias}) with(f, 0);
  with(kLayout, 0);
  for (Field f : {kMaskDensity, kWindowLeft, kWindowRight, kScale, kSoftcap, kKvLen0, kKvLen1}) with(f, 0);
  // Fewer explicit codes (the rest come from the seed), then runs of codes set to zero values.
  const std::size_t n = g.codes.size();
  for (std::size_t keep : {std::size_t{0}, n / 2, n - 1}) {
    if (keep >= n) continue;
    Genome c = g;
    c.codes.resize(keep);
    out.push_back(std::move(c));
  }
  for (std::size_t chunk = std::max<std::size_t>(n / 2, 1); n > 0; chunk /= 2) {
    for (std::size_t at = 0; at < n; at += chunk) {
      Genome c = g;
      bool changed = false;
      for (std::size_t i = at; i < std::min(n, at + chunk); ++i) {
        changed = changed || c.codes[i] != 0;
        c.codes[i] = 0;
      }
      if (changed) out.push_back(std::move(c));
    }
    if (chunk == 1 || out.size() > 400) break;
  }
  return out;
}

// Greedy: the first candidate that `keeps` becomes the genome, until none does or time is up.
// Returns the genome, the execs spent and the accepted steps.
template <class Keeps>
fuzz::Genome shrink_while(const fuzz::Genome& g, double max_seconds, std::int64_t& execs, int& steps, Keeps keeps) {
  const Clock::time_point t0 = Clock::now();
  fuzz::Genome best = g;
  bool progress = true;
  while (progress && since(t0) < max_seconds) {
    progress = false;
    for (const fuzz::Genome& c : candidates(best)) {
      if (since(t0) >= max_seconds) break;
      ++execs;
      if (keeps(c)) {
        best = c;
        ++steps;
        progress = true;
        break;  // new candidates from the smaller genome
      }
    }
  }
  return best;
}

}  // namespace

ShrinkResult shrink(Kernel& k, const fuzz::Genome& g, const fuzz::Finding& f, const Capabilities& claims,
                    const fuzz::DifferentialOptions& opt, double max_seconds) {
  ShrinkResult r;
  r.genome = g;
  r.finding = f;
  std::string harness_error;
  const auto same_finding = [&](const fuzz::Genome& c) {
    fuzz::Verdict v;
    try {
      v = fuzz::judge_genome(k, c, claims, opt);
    } catch (const HarnessError& e) {
      harness_error = e.what();
      return false;  // attnv cannot judge this smaller case: it is no evidence of the finding
    }
    if (!v.finding || v.finding->kind != f.kind) return false;
    r.finding = *v.finding;
    return true;
  };
  ++r.execs;
  r.recurred = same_finding(g);  // when it does not, r keeps the genome and finding as found
  if (r.recurred) r.genome = shrink_while(g, max_seconds, r.execs, r.steps, same_finding);
  else r.rejudge_attnv_error = harness_error;
  return r;
}

std::string error_signature(const std::string& message) {
  std::string out;
  for (std::size_t i = 0; i < message.size();) {
    if (std::isdigit(static_cast<unsigned char>(message[i]))) {
      while (i < message.size() && (std::isalnum(static_cast<unsigned char>(message[i])) || message[i] == '.' ||
                                    ((message[i] == '-' || message[i] == '+') && (message[i - 1] == 'e' || message[i - 1] == 'E'))))
        ++i;
      out += '#';
    } else {
      out += message[i++];
    }
  }
  return out;
}

AttnvErrorShrinkResult shrink_attnv_error(Kernel& k, const fuzz::Genome& g, const std::string& error,
                                          const Capabilities& claims, const fuzz::DifferentialOptions& opt, double max_seconds) {
  AttnvErrorShrinkResult r{g, error, 0, 0};
  const std::string signature = error_signature(error);
  const auto same_error = [&](const fuzz::Genome& c) {
    try {
      fuzz::judge_genome(k, c, claims, opt);  // judged (a finding or not) or skipped: not this error
    } catch (const HarnessError& e) {
      if (error_signature(e.what()) != signature) return false;
      r.error = e.what();
      return true;
    }
    return false;
  };
  ++r.execs;
  r.recurred = same_error(g);  // when it does not, r keeps the genome and error as found
  if (r.recurred) r.genome = shrink_while(g, max_seconds, r.execs, r.steps, same_error);
  return r;
}

}  // namespace attnv::fuzz
