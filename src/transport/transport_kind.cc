#include "src/transport/transport_kind.h"

#include "src/common/error.h"

namespace qccl::transport {

namespace {
struct Named {
  TransportKind kind;
  const char* name;
};
constexpr Named kNames[] = {{TransportKind::Auto, "auto"},
                            {TransportKind::Ucx, "ucx"},
                            {TransportKind::Mpi, "mpi"},
                            {TransportKind::Local, "local"},
                            {TransportKind::Nccl, "nccl"}};
}  // namespace

const char* transportName(TransportKind kind) {
  for (const Named& n : kNames) {
    if (n.kind == kind) return n.name;
  }
  return "?";
}

TransportKind parseTransportKind(const std::string& name) {
  std::string known;
  for (const Named& n : kNames) {
    if (name == n.name) return n.kind;
    known += known.empty() ? n.name : std::string(", ") + n.name;
  }
  throwError(qcclInvalidArgument, "transport '%s' is not one of %s", name.c_str(), known.c_str());
}

}  // namespace qccl::transport
