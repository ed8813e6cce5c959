// The collectives that may be compressed, and their names (QCCL_OPS, log lines).
#pragma once

#include <cstdint>
#include <string>

namespace qccl {

enum class CollectiveKind { AllReduce = 1, ReduceScatter = 2, AllGather = 3 };

const char* collectiveName(CollectiveKind kind);

// A set of collectives as bits 1 << kind.
constexpr uint32_t collectiveBit(CollectiveKind kind) { return 1u << unsigned(kind); }
constexpr uint32_t kAllCollectives = collectiveBit(CollectiveKind::AllReduce) |
                                     collectiveBit(CollectiveKind::ReduceScatter) |
                                     collectiveBit(CollectiveKind::AllGather);

// "allreduce", "reducescatter" or "allgather"; throws Error(qcclInvalidArgument) otherwise.
CollectiveKind parseCollectiveKind(const std::string& name);

// "allreduce,reducescatter,allgather" (any subset, or "all"); throws Error(qcclInvalidArgument)
// naming an unknown entry.
uint32_t parseCollectiveSet(const std::string& text);

}  // namespace qccl
