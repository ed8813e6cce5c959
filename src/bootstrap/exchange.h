// The bootstrap exchange: every rank connects to the root, both prove the unique id's secret
// (SipHash-2-4 MACs over fresh nonces), each rank sends a small payload (its transport address
// and host), and the root answers everyone with all payloads in rank order. Used once per
// communicator, to set up the transport.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "src/bootstrap/unique_id.h"
#include "src/common/deadline.h"

namespace qccl::bootstrap {

// Starts the root on a background thread listening at address (port 0: any free port) and
// returns where it listens. The thread ends when one exchange is complete or failed, or when the
// timeout passes with no rank joining (a connection that does not prove the secret is not a
// rank). Connections that fail the handshake, and ranks that claim a rank already taken or out of
// range, are refused with a logged reason while the others go on; ranks that disagree on the
// size fail together.
RootInfo startRoot(const SocketAddress& address, const Secret& secret,
                   std::chrono::milliseconds idleTimeout);

// A rank's side. Throws Error: qcclInvalidUsage when the ranks disagree on the size or this
// rank's number is taken or out of range,
// qcclRemoteError when the root refuses this rank's proof of the secret, qcclTimeout.
std::vector<std::string> exchangeThroughRoot(const RootInfo& root, int rank, int nranks,
                                             const std::string& payload, const Deadline& deadline);

}  // namespace qccl::bootstrap
