#include "src/comm/survivor_agreement.h"

#include <algorithm>
#include <cstring>
#include <deque>
#include <memory>
#include <thread>

#include "collectives/context.h"
#include "src/comm/unique_id_source.h"
#include "src/common/error.h"
#include "src/common/log.h"

namespace qccl {

namespace {

using Clock = std::chrono::steady_clock;
using transport::Transport;

enum class Kind : uint32_t { View = 0, Decision = 1 };
// A view's byte per rank.
constexpr uint8_t kLost = 1, kSuspected = 2;

uint32_t agreementTag(uint32_t round, Kind kind) {
  return ((round * 2 + uint32_t(kind)) << 8) | coll::kControlStep;
}

// One participant's side of the agreement: its view, the messages it has in flight.
class Participant {
 public:
  Participant(Transport& transport, uint32_t round, std::vector<bool> lost,
              const std::vector<bool>& suspects)
      : t_(transport),
        round_(round),
        n_(transport.size()),
        me_(transport.rank()),
        lost_(std::move(lost)),
        suspectedAt_(size_t(n_)),
        heard_(size_t(n_)),
        inbox_(size_t(n_)),
        viewRequests_(size_t(n_), 0) {
    lost_[size_t(me_)] = false;
    for (int p = 0; p < n_; ++p) {
      if (t_.peerFailed(p)) lost_[size_t(p)] = true;
      if (suspects[size_t(p)] && p != me_) suspectedAt_[size_t(p)] = Clock::now();
    }
  }

  ~Participant() {
    for (int p = 0; p < n_; ++p) {
      if (viewRequests_[size_t(p)]) t_.cancel(viewRequests_[size_t(p)]);
    }
    for (Sent& s : sent_) t_.cancel(s.request);
    if (decisionRequest_) t_.cancel(decisionRequest_);
  }

  SurvivorDecision run(std::chrono::milliseconds joinWindow) {
    const Clock::time_point start = Clock::now();
    for (int p = 0; p < n_; ++p) {
      if (p != me_ && !lost_[size_t(p)]) postViewReceive(p);
    }
    broadcastView();
    unsigned idle = 0;
    while (true) {
      bool progressed = pollSends();
      progressed = pollViews() || progressed;  // both poll, every time
      const Clock::time_point now = Clock::now();
      for (int p = 0; p < n_; ++p) {  // not joined in time: lost
        if (p == me_ || lost_[size_t(p)] || !heard_[size_t(p)].empty()) continue;
        const auto suspected = suspectedAt_[size_t(p)];
        if (now - start > joinWindow ||
            (suspected != Clock::time_point() && now - suspected > kSuspectGrace)) {
          markLost(p);
        }
      }
      if (viewChanged_) {
        broadcastView();
        progressed = true;
      }
      const int coordinator = lowestLiving();
      if (coordinator == me_) {
        if (everyoneAgrees()) return decide();
      } else if (auto decision = pollDecision(coordinator)) {
        return *decision;
      }
      if (Clock::now() - start > 2 * joinWindow) {
        throwError(qcclTimeout,
                   "rank %d: the survivors did not agree on who is lost within %lld ms (the "
                   "coordinator, rank %d, did not decide)",
                   me_, static_cast<long long>(2 * joinWindow.count()), coordinator);
      }
      if (progressed) {
        idle = 0;
      } else if (++idle > 100) {
        std::this_thread::sleep_for(std::chrono::microseconds(200));
      }
    }
  }

 private:
  struct Sent {
    Transport::Request request;
    int peer;
    std::shared_ptr<std::vector<uint8_t>> bytes;  // kept until the send completes
  };

  // suspicions: whether to send them (views) or only the lost ranks (what must agree).
  std::vector<uint8_t> encodedView(bool suspicions = true) const {
    std::vector<uint8_t> v(static_cast<size_t>(n_));
    for (int p = 0; p < n_; ++p) {
      if (lost_[size_t(p)]) {
        v[size_t(p)] = kLost;
      } else if (suspicions && isSuspected(p)) {
        v[size_t(p)] = kSuspected;
      }
    }
    return v;
  }

  bool isSuspected(int p) const {
    return suspectedAt_[size_t(p)] != Clock::time_point() && heard_[size_t(p)].empty();
  }

  void markLost(int p) {
    if (lost_[size_t(p)] || p == me_) return;
    lost_[size_t(p)] = true;
    viewChanged_ = true;
    if (viewRequests_[size_t(p)]) {
      t_.cancel(viewRequests_[size_t(p)]);
      viewRequests_[size_t(p)] = 0;
    }
    QCCL_INFO(kLogInit, "rank %d: agreement round %u counts rank %d lost", me_, round_, p);
  }

  int lowestLiving() const {
    int p = 0;
    while (lost_[size_t(p)]) ++p;
    return p;
  }

  void send(int peer, Kind kind, std::shared_ptr<std::vector<uint8_t>> bytes) {
    try {
      const Transport::Request r =
          t_.isend(peer, agreementTag(round_, kind), bytes->data(), bytes->size());
      sent_.push_back({r, peer, std::move(bytes)});
    } catch (const Error&) {
      markLost(peer);
    }
  }

  void broadcastView() {
    viewChanged_ = false;
    auto view = std::make_shared<std::vector<uint8_t>>(encodedView());
    for (int p = 0; p < n_; ++p) {
      if (p != me_ && !lost_[size_t(p)]) send(p, Kind::View, view);
    }
  }

  void postViewReceive(int p) {
    inbox_[size_t(p)].assign(size_t(n_), 0);
    try {
      viewRequests_[size_t(p)] = t_.irecv(p, agreementTag(round_, Kind::View),
                                          inbox_[size_t(p)].data(), inbox_[size_t(p)].size());
    } catch (const Error&) {
      viewRequests_[size_t(p)] = 0;
      markLost(p);
    }
  }

  // A send that fails counts its peer lost; one that completes is forgotten.
  bool pollSends() {
    bool progressed = false;
    for (auto it = sent_.begin(); it != sent_.end();) {
      bool done = false;
      try {
        done = t_.test(it->request);
      } catch (const Error&) {
        markLost(it->peer);
        done = true;
      }
      if (done) {
        it = sent_.erase(it);
        progressed = true;
      } else {
        ++it;
      }
    }
    return progressed;
  }

  // Merges the views that arrived and posts the next receive from each sender.
  bool pollViews() {
    bool progressed = false;
    for (int p = 0; p < n_; ++p) {
      const Transport::Request r = viewRequests_[size_t(p)];
      if (!r) continue;
      bool done = false;
      try {
        done = t_.test(r);
      } catch (const Error&) {
        viewRequests_[size_t(p)] = 0;
        markLost(p);
        continue;
      }
      if (!done) continue;
      viewRequests_[size_t(p)] = 0;
      progressed = true;
      heard_[size_t(p)] = inbox_[size_t(p)];
      if (heard_[size_t(p)][size_t(me_)] & kLost) {
        throwError(qcclRemoteError,
                   "rank %d: rank %d counts this rank lost (the survivors went on without it)", me_,
                   p);
      }
      for (int q = 0; q < n_; ++q) {
        const uint8_t seen = heard_[size_t(p)][size_t(q)];
        if (q == me_ || lost_[size_t(q)]) continue;
        if (seen & kLost) {
          markLost(q);
        } else if ((seen & kSuspected) && suspectedAt_[size_t(q)] == Clock::time_point() &&
                   heard_[size_t(q)].empty()) {
          suspectedAt_[size_t(q)] = Clock::now();  // its grace starts here
          viewChanged_ = true;
        }
      }
      if (!lost_[size_t(p)]) postViewReceive(p);
    }
    return progressed;
  }

  // Every rank not counted lost has sent a view with the same lost ranks as this one's.
  bool everyoneAgrees() const {
    const std::vector<uint8_t> mine = encodedView(false);
    for (int p = 0; p < n_; ++p) {
      if (p == me_ || lost_[size_t(p)]) continue;
      const std::vector<uint8_t>& theirs = heard_[size_t(p)];
      if (theirs.empty()) return false;
      for (int q = 0; q < n_; ++q) {
        if ((theirs[size_t(q)] & kLost) != mine[size_t(q)]) return false;
      }
    }
    return true;
  }

  SurvivorDecision decide() {
    SurvivorDecision d{lost_, newUniqueId()};
    auto bytes = std::make_shared<std::vector<uint8_t>>(encodedView(false));
    bytes->insert(bytes->end(), d.id.internal, d.id.internal + sizeof d.id.internal);
    for (int p = 0; p < n_; ++p) {
      if (p != me_ && !lost_[size_t(p)]) send(p, Kind::Decision, bytes);
    }
    // The decision must leave before the transport goes; a peer lost meanwhile fails the new
    // communicator's init, not this.
    const Clock::time_point until = Clock::now() + std::chrono::seconds(1);
    while (!sent_.empty() && Clock::now() < until) pollSends();
    return d;
  }

  std::unique_ptr<SurvivorDecision> pollDecision(int coordinator) {
    if (decisionFrom_ != coordinator) {
      if (decisionRequest_) t_.cancel(decisionRequest_);
      decisionRequest_ = 0;
      decisionFrom_ = coordinator;
      decision_.assign(size_t(n_) + sizeof(qcclUniqueId), 0);
      try {
        decisionRequest_ = t_.irecv(coordinator, agreementTag(round_, Kind::Decision),
                                    decision_.data(), decision_.size());
      } catch (const Error&) {
        markLost(coordinator);
        return nullptr;
      }
    }
    bool done = false;
    try {
      done = t_.test(decisionRequest_);
    } catch (const Error&) {
      decisionRequest_ = 0;
      markLost(coordinator);
      return nullptr;
    }
    if (!done) return nullptr;
    decisionRequest_ = 0;
    auto d = std::make_unique<SurvivorDecision>();
    d->lost.resize(size_t(n_));
    for (int p = 0; p < n_; ++p) d->lost[size_t(p)] = decision_[size_t(p)] != 0;
    std::memcpy(d->id.internal, decision_.data() + n_, sizeof d->id.internal);
    if (d->lost[size_t(me_)]) {
      throwError(qcclRemoteError,
                 "rank %d: the survivors (coordinated by rank %d) counted this rank lost", me_,
                 coordinator);
    }
    return d;
  }

  Transport& t_;
  const uint32_t round_;
  const int n_;
  const int me_;
  std::vector<bool> lost_;
  std::vector<Clock::time_point> suspectedAt_;  // when a suspicion reached this rank; zero: none
  bool viewChanged_ = true;
  std::vector<std::vector<uint8_t>> heard_;  // each rank's latest view; empty: not heard yet
  std::vector<std::vector<uint8_t>> inbox_;  // the view receive in flight from each rank
  std::vector<Transport::Request> viewRequests_;
  std::deque<Sent> sent_;
  int decisionFrom_ = -1;
  Transport::Request decisionRequest_ = 0;
  std::vector<uint8_t> decision_;
};

}  // namespace

SurvivorDecision agreeOnSurvivors(Transport& transport, uint32_t round, std::vector<bool> lost,
                                  const std::vector<bool>& suspects,
                                  std::chrono::milliseconds joinWindow) {
  if (lost.size() != size_t(transport.size()) || suspects.size() != lost.size()) {
    throwError(qcclInternalError, "agreement: a view of %zu ranks for %d", lost.size(),
               transport.size());
  }
  Participant participant(transport, round, std::move(lost), suspects);
  return participant.run(joinWindow);
}

}  // namespace qccl
