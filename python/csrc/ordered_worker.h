// One thread that runs the backend's collectives in the order they were issued. Every rank
// issues its collectives in the same order (c10d's contract), so running them in that order on
// one thread keeps the ranks matched, while the caller goes on (FSDP2's reduce-scatter overlaps
// with the rest of backward).
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace qccl::torch_backend {

class OrderedWorker {
 public:
  OrderedWorker();
  // Runs what was submitted, then stops.
  ~OrderedWorker();
  OrderedWorker(const OrderedWorker&) = delete;
  OrderedWorker& operator=(const OrderedWorker&) = delete;

  void submit(std::function<void()> job);

 private:
  void run();

  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::function<void()>> jobs_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace qccl::torch_backend
