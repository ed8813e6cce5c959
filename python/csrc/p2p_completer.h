// Completes the Works of point-to-point messages (qcclIsend / qcclIrecv) in the background: one
// thread polls the messages in flight (qcclTest) and finishes each Work when its message is done.
// A message never waits in the ordered worker's queue behind a collective, and a receive that
// waits long for its sender never holds a collective up (as gloo's send and recv are
// asynchronous). A message still pending after the group's timeout is cancelled and its Work
// fails, naming the peer and tag.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "qccl/qccl.h"

namespace qccl::torch_backend {

class P2pCompleter {
 public:
  explicit P2pCompleter(std::chrono::milliseconds timeout);
  // Cancels what is still pending (its Works fail), then stops.
  ~P2pCompleter();
  P2pCompleter(const P2pCompleter&) = delete;
  P2pCompleter& operator=(const P2pCompleter&) = delete;

  // done(nullptr) once the message completed, done(error) if it failed or timed out; called on
  // the completer's thread. what: for messages, e.g. "recv from rank 1, tag 0".
  void track(qcclRequest_t request, std::string what, std::function<void(std::exception_ptr)> done);

 private:
  struct Pending {
    qcclRequest_t request;
    std::string what;
    std::function<void(std::exception_ptr)> done;
    std::chrono::steady_clock::time_point posted;
  };
  void run();

  const std::chrono::milliseconds timeout_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Pending> pending_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace qccl::torch_backend
