// Exact all-to-all: block p of every rank's buffer goes to rank p, framed.
#include <cstring>

#include "collectives/collectives.h"
#include "collectives/messages.h"
#include "collectives/phase.h"
#include "collectives/reduction.h"

namespace qccl::coll {

void alltoall(Context& context, const void* send, void* recv, size_t count, qcclDataType_t dtype) {
  constexpr uint8_t kKindBlock = 8;
  const int n = context.group.size(), me = context.group.me;
  const size_t bytes = count * dataTypeSize(dtype);
  const auto* in = static_cast<const uint8_t*>(send);
  std::vector<std::vector<uint8_t>> out(static_cast<size_t>(n)), got(static_cast<size_t>(n));
  {
    Phase phase(context);
    for (int p = 0; p < n; ++p) {
      if (p == me) continue;
      out[size_t(p)].resize(kExactHeaderBytes + bytes);
      writeExactHeader(out[size_t(p)].data(), dtype, 0, kKindBlock, count);
      std::memcpy(out[size_t(p)].data() + kExactHeaderBytes, in + size_t(p) * bytes, bytes);
      got[size_t(p)].assign(kExactHeaderBytes + bytes, 0);
      phase.recv(p, got[size_t(p)].data(), got[size_t(p)].size());
      phase.send(p, out[size_t(p)].data(), out[size_t(p)].size());
    }
    phase.wait();
  }
  for (int p = 0; p < n; ++p) {
    if (p == me) continue;
    acceptExact(context, got[size_t(p)], dtype, 0, kKindBlock, count, p);
  }
  throwIfUsageError(context);
  auto* result = static_cast<uint8_t*>(recv);
  std::memmove(result + size_t(me) * bytes, in + size_t(me) * bytes, bytes);
  for (int p = 0; p < n; ++p) {
    if (p != me)
      std::memcpy(result + size_t(p) * bytes, got[size_t(p)].data() + kExactHeaderBytes, bytes);
  }
}

}  // namespace qccl::coll
