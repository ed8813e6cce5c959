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

uint32_t parseCollectiveSet(const std::string& text) {
  if (text == "all") return kAllCollectives;
  uint32_t set = 0;
  size_t begin = 0;
  while (begin <= text.size()) {
    const size_t end = std::min(text.find(',', begin), text.size());
    const std::string name = text.substr(begin, end - begin);
    bool known = false;
    for (CollectiveKind k :
         {CollectiveKind::AllReduce, CollectiveKind::ReduceScatter, CollectiveKind::AllGather}) {
      if (name == collectiveName(k)) {
        set |= collectiveBit(k);
        known = true;
      }
    }
    if (!known) {
      throwError(qcclInvalidArgument,
                 "QCCL_OPS entry '%s' is not one of allreduce, reducescatter, allgather, all",
                 name.c_str());
    }
    begin = end + 1;
  }
  return set;
}

}  // namespace qccl
