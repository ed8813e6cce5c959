// Receives waiting per channel (peer and tag) in the order they were posted: how a transport keeps
// Transport's promise that messages under one tag match in posting order.
#pragma once

#include <algorithm>
#include <deque>
#include <map>

#include "src/transport/transport.h"

namespace qccl::transport {

template <typename Channel>
using ReceiveQueues = std::map<Channel, std::deque<Transport::Request>>;

// Takes a cancelled receive out of its channel's queue, and the queue out once it is empty.
template <typename Channel>
void dropReceive(ReceiveQueues<Channel>& queues, const Channel& channel,
                 Transport::Request request) {
  auto queue = queues.find(channel);
  if (queue == queues.end()) return;
  std::deque<Transport::Request>& waiting = queue->second;
  auto found = std::find(waiting.begin(), waiting.end(), request);
  if (found != waiting.end()) waiting.erase(found);
  if (waiting.empty()) queues.erase(queue);
}

}  // namespace qccl::transport
