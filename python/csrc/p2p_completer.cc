#include "p2p_completer.h"

#include <stdexcept>
#include <vector>

namespace qccl::torch_backend {

P2pCompleter::P2pCompleter(std::chrono::milliseconds timeout)
    : timeout_(timeout), thread_([this] { run(); }) {}

P2pCompleter::~P2pCompleter() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void P2pCompleter::track(qcclRequest_t request, std::string what,
                         std::function<void(std::exception_ptr)> done) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    pending_.push_back(
        {request, std::move(what), std::move(done), std::chrono::steady_clock::now()});
  }
  changed_.notify_all();
}

void P2pCompleter::run() {
  unsigned idle = 0;
  for (;;) {
    std::vector<Pending> polling;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [this] { return stopping_ || !pending_.empty(); });
      if (stopping_) {
        for (Pending& p : pending_) {
          qcclCancel(p.request);
          p.done(std::make_exception_ptr(std::runtime_error("qccl backend: " + p.what +
                                                            ": the process group was destroyed "
                                                            "before the message completed")));
        }
        return;
      }
      polling.assign(std::make_move_iterator(pending_.begin()),
                     std::make_move_iterator(pending_.end()));
      pending_.clear();
    }
    bool progressed = false;
    std::vector<Pending> still;
    for (Pending& p : polling) {
      int done = 0;
      const qcclResult_t result = qcclTest(p.request, &done);  // frees it when done or failed
      if (result != qcclSuccess) {
        p.done(std::make_exception_ptr(std::runtime_error("qccl backend: " + p.what +
                                                          " failed: " + qcclGetErrorString(result) +
                                                          ": " + qcclGetLastError(nullptr))));
        progressed = true;
      } else if (done) {
        p.done(nullptr);
        progressed = true;
      } else if (std::chrono::steady_clock::now() - p.posted > timeout_) {
        qcclCancel(p.request);
        p.done(std::make_exception_ptr(std::runtime_error(
            "qccl backend: " + p.what + " did not complete within the group's timeout (" +
            std::to_string(timeout_.count()) + " ms)")));
        progressed = true;
      } else {
        still.push_back(std::move(p));
      }
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      pending_.insert(pending_.begin(), std::make_move_iterator(still.begin()),
                      std::make_move_iterator(still.end()));
    }
    // As the collectives wait: poll while messages flow, then yield, then sleep a little.
    idle = progressed ? 0 : idle + 1;
    if (idle > 1000) {
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    } else if (idle > 10) {
      std::this_thread::yield();
    }
  }
}

}  // namespace qccl::torch_backend
