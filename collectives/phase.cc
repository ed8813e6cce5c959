#include "collectives/phase.h"

#include <thread>

#include "src/common/error.h"

namespace qccl::coll {

void Backoff::idle(const std::function<std::string()>& awaited) {
  if (context_.aborted && context_.aborted->load()) {
    throwError(qcclInvalidUsage, "the communicator was aborted during the call");
  }
  if (context_.deadline.passed()) {
    if (context_.silent && context_.transport) {
      for (int peer : context_.transport->pendingPeers()) context_.silent->insert(peer);
    }
    throwError(qcclTimeout, "rank %d: QCCL_TIMEOUT passed waiting for messages (%s)",
               context_.globalRank(), awaited().c_str());
  }
  // Ranks often share cores with each other and with the kernel's network processing, so a
  // rank that spins long delays the very packets it waits for: a few polls, then it yields the
  // core at every poll, then it sleeps. On the emulated cluster (4 ranks on 2 cores) a 4 KiB
  // exact allreduce took 1.2 ms spinning 1000 polls before sleeping, 0.2 ms this way.
  constexpr unsigned kSpinPolls = 10, kYieldPolls = 1000, kNoticePolls = 16;
  ++idle_;
  if (idle_ % kNoticePolls == 0 && context_.transport && context_.notice) {
    takeNotices();
    const FailureNotice& notice = *context_.notice;
    if (notice.from >= 0 && notice.sequence <= context_.sequence) {
      throwError(qcclRemoteError,
                 "rank %d: rank %d gave up a call because it lost a peer; this call cannot "
                 "complete either (qcclCommShrink makes a communicator of the survivors)",
                 context_.globalRank(), notice.from);
    }
  }
  if (idle_ > kSpinPolls + kYieldPolls) {
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  } else if (idle_ > kSpinPolls) {
    std::this_thread::yield();
  }
}

void Backoff::takeNotices() {
  FailureNotice& earliest = *context_.notice;
  for (int from; (from = context_.transport->probe(kFailureNoticeTag)) >= 0;) {
    // The probe found the notice arrived: its receive completes at once.
    uint64_t sequence = 0;
    const transport::Transport::Request request =
        context_.transport->irecv(from, kFailureNoticeTag, &sequence, sizeof sequence);
    try {
      while (!context_.transport->test(request)) {
        if (context_.deadline.passed()) {
          context_.transport->cancel(request);
          sequence = 0;  // unread: taken as the earliest call
          break;
        }
      }
    } catch (const Error&) {
      sequence = 0;  // a lost sender or a foreign size: taken as the earliest call
    }
    if (earliest.from < 0 || sequence < earliest.sequence) earliest = {from, sequence};
  }
}

Phase::~Phase() {
  for (const Message& m : messages_) {
    if (!m.done) context_.transport->cancel(m.request);
  }
}

Phase::Handle Phase::send(int peer, const void* data, size_t bytes) {
  const int global = context_.group.ranks[size_t(peer)];
  messages_.push_back({context_.transport->isend(global, tag_, data, bytes), global, false, false});
  ++open_;
  if (context_.wire) context_.wire->sent += bytes;
  return messages_.size() - 1;
}

Phase::Handle Phase::recv(int peer, void* data, size_t bytes) {
  const int global = context_.group.ranks[size_t(peer)];
  messages_.push_back({context_.transport->irecv(global, tag_, data, bytes), global, true, false});
  ++open_;
  if (context_.wire) context_.wire->received += bytes;
  return messages_.size() - 1;
}

bool Phase::poll() {
  bool progressed = false;
  for (size_t i = firstOpen_; i < messages_.size(); ++i) {
    Message& m = messages_[i];
    if (m.done) continue;
    try {
      m.done = context_.transport->test(m.request);
    } catch (const Error& e) {
      m.done = true;  // released by the transport
      --open_;
      if (e.code() != qcclInvalidUsage) throw;
      context_.recordUsageError(e.what());
      progressed = true;
      continue;
    }
    if (m.done) {
      --open_;
      progressed = true;
    }
  }
  while (firstOpen_ < messages_.size() && messages_[firstOpen_].done) ++firstOpen_;
  return progressed;
}

void Phase::wait() {
  waitUntil([this] { return open_ == 0; });
}

void Phase::wait(Handle handle) {
  waitUntil([this, handle] { return messages_[handle].done; });
}

void Phase::waitUntil(const std::function<bool()>& finished) {
  Backoff backoff(context_);
  while (!finished()) {
    if (poll()) {
      backoff.progressed();
    } else if (!finished()) {
      backoff.idle([this] { return awaited(); });
    }
  }
}

std::string Phase::awaited() const {
  std::string text;
  for (size_t i = firstOpen_; i < messages_.size(); ++i) {
    const Message& m = messages_[i];
    if (m.done) continue;
    text += (text.empty() ? "" : ", ") + std::string(m.isRecv ? "from " : "to ") +
            std::to_string(m.peer);
  }
  return text;
}

void exchangeWithAll(Context& context, const void* mine, size_t bytes, uint8_t* all) {
  Phase phase(context);
  for (int p = 0; p < context.group.size(); ++p) {
    if (p == context.group.me) continue;
    phase.recv(p, all + size_t(p) * bytes, bytes);
    phase.send(p, mine, bytes);
  }
  phase.wait();
}

}  // namespace qccl::coll
