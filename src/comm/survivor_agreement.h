// How the survivors of a communicator settle who is lost, without the lost ranks' help
// (qcclCommShrink; docs/RELIABILITY.md, "Elastic communicators").
//
// Every participant floods its view (one byte per rank: lost, suspected or neither) to every rank
// it does not count lost, again whenever the view grows, and merges the views it receives; a rank
// is counted lost when its connection failed (the transport says so), when any participant counts
// it lost, when it was suspected (a call timed out waiting for it) and has not joined within a
// short grace after, or when it has not joined within the join window. A suspected rank that
// joins is not lost (it may have been waiting for another). Views only grow, so they converge. The
// coordinator, the lowest rank nobody counts lost, decides once every rank it does not count lost
// has sent it a view equal to its own: it makes the new communicator's unique id (it hosts the
// bootstrap root, as the new rank 0) and sends the decision, the lost set and that id, to each of
// them. A participant whose coordinator is lost moves on to the next one.
//
// The decision is the coordinator's alone, and the new communicator's init confirms it: a rank
// that acted on a decision whose coordinator then died fails there (the root is gone) rather than
// joining a communicator of another membership.
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

#include "qccl/qccl.h"
#include "src/transport/transport.h"

namespace qccl {

struct SurvivorDecision {
  std::vector<bool> lost;  // by rank of the old communicator
  qcclUniqueId id;         // the new communicator's
};

// Runs the agreement over `transport` (the old communicator's) as round `round` (every survivor
// passes the same one: the round's messages carry it, so a retry never meets the last one's).
// lost: what this rank knows is lost, the ranks it excludes included; suspects: the ranks a call
// of this rank timed out waiting for. joinWindow: how long a rank nobody counts lost or suspects
// may take to join; the whole agreement gives up after twice that.
// Throws Error: qcclRemoteError when the decision counts this rank lost, qcclTimeout when no
// decision came in time.
SurvivorDecision agreeOnSurvivors(transport::Transport& transport, uint32_t round,
                                  std::vector<bool> lost, const std::vector<bool>& suspects,
                                  std::chrono::milliseconds joinWindow);

// How long a suspected rank has to join after the suspicion reached a participant: the survivors
// all reach the agreement within milliseconds of each other (failure notices), so this only has
// to cover scheduling delays.
constexpr std::chrono::milliseconds kSuspectGrace(300);

}  // namespace qccl
