#include "src/comm/collective_kind.h"

#include <algorithm>

#include "src/common/error.h"

namespace qccl {

const char* collectiveName(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::AllReduce: return "allreduce";
    case CollectiveKind::ReduceScatter: return "reducescatter";
    case CollectiveKind::AllGather: return "allgather";
  }
  return "?";
}

namespace {

constexpr CollectiveKind kKinds[] = {CollectiveKind::AllReduce, CollectiveKind::ReduceScatter,
                                     CollectiveKind::AllGather};

bool findCollectiveKind(const std::string& name, CollectiveKind& kind) {
  for (CollectiveKind k : kKinds) {
    if (name == collectiveName(k)) {
      kind = k;
      return true;
    }
  }
  return false;
}

}  // namespace

CollectiveKind parseCollectiveKind(const std::string& name) {
  CollectiveKind kind{};
  if (!findCollectiveKind(name, kind)) {
    throwError(qcclInvalidArgument,
               "collective '%s' is not one of allreduce, reducescatter, allgather", name.c_str());
  }
  return kind;
}

uint32_t parseCollectiveSet(const std::string& text) {
  if (text == "all") return kAllCollectives;
  uint32_t set = 0;
  size_t begin = 0;
  while (begin <= text.size()) {
    const size_t end = std::min(text.find(',', begin), text.size());
    const std::string name = text.substr(begin, end - begin);
    CollectiveKind kind{};
    if (findCollectiveKind(name, kind)) {
      set |= collectiveBit(kind);
    } else {
      throwError(qcclInvalidArgument,
                 "QCCL_OPS entry '%s' is not one of allreduce, reducescatter, allgather, all",
                 name.c_str());
    }
    begin = end + 1;
  }
  return set;
}

}  // namespace qccl
