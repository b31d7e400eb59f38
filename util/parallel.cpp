#include "util/parallel.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <unistd.h>

namespace attnv {

int default_threads() {
  if (const char* env = std::getenv("ATTNV_THREADS")) {
    const int n = std::atoi(env);
    if (n >= 1) return n;
  }
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

namespace {

// One call's chunks and its first failure. The exception rethrown is the one of the lowest chunk
// that throws, whatever the timing: chunks are handed out in increasing order and a chunk below a
// failed one always runs, so a message naming the first bad element is the same in every run (a
// report is promised byte-identical per seed). Chunks above a failed one are not started.
class Job {
 public:
  Job(std::int64_t n, std::int64_t chunks, const std::function<void(std::int64_t, std::int64_t)>& body)
      : n_(n), chunks_(chunks), body_(body) {}

  // Runs chunks until none is left; called by every thread taking part.
  void work() {
    for (std::int64_t c; (c = next_.fetch_add(1)) < chunks_;) {
      {
        std::lock_guard lock(error_mutex_);
        if (c > error_chunk_) continue;
      }
      const std::int64_t begin = n_ * c / chunks_, end = n_ * (c + 1) / chunks_;
      try {
        body_(begin, end);
      } catch (...) {
        std::lock_guard lock(error_mutex_);
        if (c < error_chunk_) {
          error_chunk_ = c;
          error_ = std::current_exception();
        }
      }
    }
  }
  // After every thread taking part has returned from work().
  void rethrow() const {
    if (error_) std::rethrow_exception(error_);
  }

 private:
  const std::int64_t n_, chunks_;
  const std::function<void(std::int64_t, std::int64_t)>& body_;
  std::atomic<std::int64_t> next_{0};
  std::mutex error_mutex_;
  std::exception_ptr error_;
  std::int64_t error_chunk_ = chunks_;
};

// Threads started per call (the behaviour before the pool, kept for the calls the pool cannot
// take): nested calls, calls while another thread's call holds the pool, calls during exit.
void run_on_new_threads(Job& job, int workers) {
  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(workers - 1));
  for (int t = 1; t < workers; ++t)
    threads.emplace_back([&job] { job.work(); });
  job.work();
  for (auto& th : threads) th.join();
}

// How long an idle worker, or a caller waiting for its workers, polls before it sleeps. A decode
// loop calls again within a fraction of a millisecond, and waking a sleeping thread took tens of
// microseconds on the 2-vCPU VMs, a fifth of a short decode call (bench/README.md, "Zen 4,
// session 19"); a few tens of microseconds of polling per call cost the machine little. Polling
// changes when a thread takes chunks, never which chunks there are or what they compute. A pool
// with more threads than the CPU has (ATTNV_THREADS=3 on 2 cores) does not poll: there a polling
// thread would take the CPU from one that has work (ThreadSanitizer's core tests ran 12% longer).
constexpr std::chrono::microseconds kPoll{50};

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// True as soon as ready() is, false after `limit` without it.
template <class Ready>
bool poll_for(std::chrono::microseconds limit, Ready ready) {
  const auto until = std::chrono::steady_clock::now() + limit;
  for (unsigned i = 0;; ++i) {
    if (ready()) return true;
    if (i % 64 == 63 && std::chrono::steady_clock::now() >= until) return false;
    cpu_relax();
  }
}

// Workers started once (on first need) and kept between calls (polling, then asleep: kPoll). Why: a thread started per
// call began running its first chunk 2.2 ms on average (median 2.7) into a 5 ms decode call on
// the 2-vCPU VM (bench/README.md, "Decode per ISA path"): Linux queued the new thread on the
// caller's busy core. A sleeping worker is woken on an idle core instead.
// One call at a time holds the pool; the caller takes part, so at most `workers` threads run
// chunks (the caller and workers - 1 pool threads), as many as the per-call threads were. When
// the caller runs out of chunks it closes the job: a worker not yet awake by then stays out of
// it, so the call never waits for a wake-up that brings no work.
class Pool {
 public:
  // False if the pool is taken (by another thread's call, or by the call whose chunk makes this
  // nested one: waiting for the pool there would never end) or shut down, or a thread could not
  // be started: the caller then runs the job on threads of its own.
  bool run(Job& job, int workers) {
    if (getpid() != pid_) return false;  // a fork's child: the workers stayed in the parent
    const int helpers = workers - 1;
    {
      std::lock_guard lock(mutex_);
      if (busy_ || stopped_) return false;
      try {
        while (static_cast<int>(threads_.size()) < helpers) {
          const int index = static_cast<int>(threads_.size());
          threads_.emplace_back([this, index] { loop(index); });
        }
        poll_ = threads_.size() + 1 <= std::max(1u, std::thread::hardware_concurrency());
      } catch (const std::exception&) {
        return false;  // the threads started so far stay for later calls
      }
      busy_ = true;
      job_ = &job;
      helpers_ = helpers;
      ++generation_;
    }
    wake_.notify_all();
    job.work();
    std::unique_lock lock(mutex_);
    job_ = nullptr;  // closed: no worker joins from now on
    if (active_ != 0 && poll_) {
      lock.unlock();
      poll_for(kPoll, [this] { return active_.load(std::memory_order_acquire) == 0; });
      lock.lock();
    }
    done_.wait(lock, [this] { return active_ == 0; });
    busy_ = false;
    return true;
  }

  // The process that started the workers: a fork's child has none of them.
  pid_t owner() const { return pid_; }

  // At exit. No call is running (a call's caller is inside run() until its workers are done).
  ~Pool() {
    {
      std::lock_guard lock(mutex_);
      stopped_ = true;
    }
    wake_.notify_all();
    for (auto& th : threads_) th.join();
  }

 private:
  void loop(int index) {
    std::uint64_t seen = 0;
    std::unique_lock lock(mutex_);
    for (;;) {
      if (poll_ && !stopped_ && generation_ == seen) {  // poll a while for the next call, then sleep
        lock.unlock();
        poll_for(kPoll, [&] { return stopped_.load(std::memory_order_relaxed) || generation_.load(std::memory_order_acquire) != seen; });
        lock.lock();
      }
      wake_.wait(lock, [&] { return stopped_ || generation_ != seen; });
      if (stopped_) return;
      seen = generation_;
      if (!job_ || index >= helpers_) continue;  // closed before this worker came, or not wanted
      Job* job = job_;
      ++active_;
      lock.unlock();
      job->work();
      lock.lock();
      if (--active_ == 0 && !job_) done_.notify_one();
    }
  }

  const pid_t pid_ = getpid();
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::vector<std::thread> threads_;
  // Written under mutex_; atomic because polling threads read them without it.
  std::atomic<bool> stopped_{false};
  std::atomic<int> active_{0};            // pool threads inside the current job's work()
  std::atomic<std::uint64_t> generation_{0};  // calls published so far
  std::atomic<bool> poll_{false};             // the pool's threads and the caller fit the CPU
  bool busy_ = false;
  Job* job_ = nullptr;   // the open job, or none
  int helpers_ = 0;      // pool threads the open job may use: those with index < helpers_
};

// Cleared when the pool is destroyed: a parallel_for from a static destructor that runs later
// starts its own threads instead.
std::atomic<bool> g_pool_alive{false};

Pool* pool() {
  struct Owner {
    std::unique_ptr<Pool> pool = std::make_unique<Pool>();
    Owner() { g_pool_alive = true; }
    ~Owner() {
      g_pool_alive = false;
      // In a fork's child the workers (and a waiter registered on the condition variables, or
      // the mutex's owner) stayed in the parent: joining or destroying them would never
      // return. The pool is left as it is.
      if (getpid() != pool->owner()) (void)pool.release();
    }
  };
  static Owner owner;
  return g_pool_alive ? owner.pool.get() : nullptr;
}

}  // namespace

void parallel_for(std::int64_t n, const std::function<void(std::int64_t, std::int64_t)>& body,
                  int threads, std::int64_t grain) {
  if (n <= 0) return;
  if (threads <= 0) threads = default_threads();
  grain = std::max<std::int64_t>(grain, 1);
  // More chunks than threads so uneven rows (causal masks) balance; workers pull chunks.
  const std::int64_t max_chunks = (n + grain - 1) / grain;
  const std::int64_t chunks = std::min<std::int64_t>(max_chunks, std::int64_t{threads} * 8);
  if (threads == 1 || chunks == 1) {
    body(0, n);
    return;
  }
  Job job(n, chunks, body);
  const int workers = static_cast<int>(std::min<std::int64_t>(threads, chunks));
  Pool* p = pool();
  if (!p || !p->run(job, workers)) run_on_new_threads(job, workers);
  job.rethrow();
}

}  // namespace attnv
