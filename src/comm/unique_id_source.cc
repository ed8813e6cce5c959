#include "src/comm/unique_id_source.h"

#include <cstdlib>
#include <cstring>
#include <string>

#include "src/bootstrap/exchange.h"
#include "src/bootstrap/unique_id.h"
#include "src/common/error.h"
#include "src/common/log.h"
#include "src/common/params.h"
#include "src/common/random_bytes.h"
#include "src/common/siphash.h"
#if QCCL_HAVE_MPI
#include "src/transport/mpi_transport.h"
#endif

namespace qccl {

namespace {

std::chrono::milliseconds rootIdleTimeout() {
  return std::chrono::milliseconds(paramInt(params::kTimeout) * 1000);
}

int envInt(const char* name) {
  const char* v = std::getenv(name);
  char* end = nullptr;
  const long value = v ? std::strtol(v, &end, 10) : -1;
  if (v == nullptr || *v == '\0' || *end != '\0' || value < 0) {
    throwError(qcclInvalidArgument, "%s=%s is not a non-negative integer", name, v ? v : "(unset)");
  }
  return int(value);
}

LaunchInfo fromQcclrun() {
  LaunchInfo info;
  info.rank = envInt("QCCL_RANK");
  info.size = envInt("QCCL_WORLD_SIZE");
  const char* id = std::getenv("QCCL_COMM_ID");
  if (id == nullptr) throwError(qcclInvalidUsage, "QCCL_RANK is set but QCCL_COMM_ID is not");
  info.id = bootstrap::uniqueIdFromHex(id);
  return info;
}

// torchrun gives no shared secret: QCCL_SECRET supplies one; without it the secret is derived
// from the rendezvous (so it only tells qccl jobs apart, it does not keep anyone out).
LaunchInfo fromTorchrun() {
  LaunchInfo info;
  info.rank = envInt("RANK");
  info.size = envInt("WORLD_SIZE");
  const std::string host = std::getenv("MASTER_ADDR");
  const int masterPort = std::getenv("MASTER_PORT") ? envInt("MASTER_PORT") : 29500;
  const int port =
      paramString(params::kPort).empty() ? masterPort + 1 : int(paramInt(params::kPort));
  bootstrap::Secret secret;
  const std::string given = paramString(params::kSecret);
  if (!given.empty()) {
    secret = bootstrap::parseSecret(given);
  } else {
    const char* runId = std::getenv("TORCHELASTIC_RUN_ID");
    const std::string seed = host + ":" + std::to_string(masterPort) + ":" + (runId ? runId : "");
    const uint8_t key[16] = {'q', 'c', 'c', 'l', '-', 't', 'o', 'r', 'c', 'h', 'r', 'u', 'n'};
    const uint64_t a = sipHash24(key, seed.data(), seed.size());
    const uint64_t b = sipHash24(key, &a, sizeof a);
    std::memcpy(secret.data(), &a, 8);
    std::memcpy(secret.data() + 8, &b, 8);
    if (info.rank == 0) {
      QCCL_WARN(
          "QCCL_SECRET is not set: the bootstrap secret is derived from MASTER_ADDR and "
          "MASTER_PORT, which does not keep other processes out");
    }
  }
  bootstrap::RootInfo root;
  root.address = bootstrap::resolveHost(host, uint16_t(port));
  root.secret = secret;
  if (info.rank == 0) {
    bootstrap::SocketAddress any = root.address;
    if (any.storage.ss_family == AF_INET) {
      reinterpret_cast<sockaddr_in*>(&any.storage)->sin_addr.s_addr = htonl(INADDR_ANY);
    } else {
      reinterpret_cast<sockaddr_in6*>(&any.storage)->sin6_addr = in6addr_any;
    }
    bootstrap::startRoot(any, secret, rootIdleTimeout());
  }
  info.id = bootstrap::encodeUniqueId(root);
  return info;
}

LaunchInfo fromOpenMpi() {
#if QCCL_HAVE_MPI
  LaunchInfo info;
  info.rank = envInt("OMPI_COMM_WORLD_RANK");
  info.size = envInt("OMPI_COMM_WORLD_SIZE");
  if (info.rank == 0) info.id = newUniqueId();
  transport::MpiTransport::broadcastFromRankZero(&info.id, sizeof info.id);
  return info;
#else
  throwError(qcclInvalidUsage,
             "launched by Open MPI, but this qccl was built without MPI (QCCL_WITH_MPI)");
#endif
}

}  // namespace

qcclUniqueId newUniqueId() {
  bootstrap::Secret secret;
  randomBytes(secret.data(), secret.size());
  return bootstrap::encodeUniqueId(
      bootstrap::startRoot(bootstrap::bootstrapInterfaceAddress(), secret, rootIdleTimeout()));
}

LaunchInfo launchInfoFromEnv() {
  if (std::getenv("QCCL_RANK")) return fromQcclrun();
  if (std::getenv("RANK") && std::getenv("WORLD_SIZE") && std::getenv("MASTER_ADDR")) {
    return fromTorchrun();
  }
  if (std::getenv("OMPI_COMM_WORLD_RANK")) return fromOpenMpi();
  throwError(qcclInvalidUsage,
             "no launcher environment: expected qcclrun's QCCL_RANK/QCCL_WORLD_SIZE/QCCL_COMM_ID, "
             "torchrun's RANK/WORLD_SIZE/MASTER_ADDR, or Open MPI's OMPI_COMM_WORLD_RANK/SIZE");
}

}  // namespace qccl
