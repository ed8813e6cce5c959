// One phase of a collective: receives and sends posted under one tag, then waited for until the
// deadline, all together or one at a time (a pipelined collective works on each message as it
// arrives). A receive whose size does not match is recorded in the context as a usage error and
// counts as done, so that every rank still finishes every phase (and learns of the disagreement)
// instead of waiting for messages that will not come.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "collectives/context.h"

namespace qccl::coll {

// Paces a polling loop: polls while messages flow, yields the core and then sleeps a little when
// nothing happens (ranks may share cores with each other and with the kernel's network stack).
// Throws Error: qcclTimeout past the deadline (naming what is still awaited), qcclInvalidUsage when
// the communicator was aborted, qcclRemoteError when another rank gave its call up because it lost
// a peer in this call or an earlier one (kFailureNoticeTag; looked for once the loop has gone
// idle).
class Backoff {
 public:
  explicit Backoff(const Context& context) : context_(context) {}
  void progressed() { idle_ = 0; }
  void idle(const std::function<std::string()>& awaited);

 private:
  void takeNotices();  // receives every notice that has arrived into context_.notice

  const Context& context_;
  unsigned idle_ = 0;
};

class Phase {
 public:
  using Handle = size_t;

  explicit Phase(Context& context) : context_(context), tag_(context.nextTag()) {}
  ~Phase();  // cancels what is still pending (error paths)
  Phase(const Phase&) = delete;
  Phase& operator=(const Phase&) = delete;

  // peer: index in the context's group. Messages between two ranks under one tag match in the
  // order they were posted.
  Handle send(int peer, const void* data, size_t bytes);
  Handle recv(int peer, void* data, size_t bytes);

  // Tests every pending message once; true when any completed. Throws Error for a lost peer.
  bool poll();
  bool done(Handle handle) const { return messages_[handle].done; }
  // Waits for everything posted.
  void wait();
  // Waits for one message (the others progress meanwhile).
  void wait(Handle handle);
  // What is still awaited, e.g. "from 2, to 3" (for timeout messages).
  std::string awaited() const;

 private:
  void waitUntil(const std::function<bool()>& finished);
  struct Message {
    transport::Transport::Request request;
    int peer;  // global rank
    bool isRecv;
    bool done;
  };
  Context& context_;
  uint32_t tag_;
  std::vector<Message> messages_;
  size_t firstOpen_ = 0;  // messages before it are all done
  size_t open_ = 0;
};

// Sends the same `bytes` bytes to every other rank of the group and receives each one's into
// all + peer * bytes (this rank's slot is left alone); returns when every message is done.
void exchangeWithAll(Context& context, const void* mine, size_t bytes, uint8_t* all);

}  // namespace qccl::coll
