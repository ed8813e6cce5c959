// The contents of qcclUniqueId: where the bootstrap root listens and the secret every
// connection must prove (docs/API.md, "Bootstrap").
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "qccl/qccl.h"
#include "src/bootstrap/socket.h"

namespace qccl::bootstrap {

using Secret = std::array<uint8_t, 16>;

struct RootInfo {
  SocketAddress address;
  Secret secret{};
};

qcclUniqueId encodeUniqueId(const RootInfo& info);
// Throws Error(qcclInvalidArgument) for an id qcclGetUniqueId did not make.
RootInfo decodeUniqueId(const qcclUniqueId& id);

// The id as 256 hex digits (how qcclrun passes it in QCCL_COMM_ID), and back.
std::string uniqueIdToHex(const qcclUniqueId& id);
qcclUniqueId uniqueIdFromHex(const std::string& hex);

Secret parseSecret(const std::string& hex);  // 32 hex digits

}  // namespace qccl::bootstrap
