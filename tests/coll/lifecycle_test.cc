// A thousand communicators made, used and destroyed in turn: every cycle's threads, sockets,
// buffers and error-feedback state must go with its communicator. The sanitized build
// (docs/RELIABILITY.md) runs this under LeakSanitizer, which fails the run on any leak; here the
// results of every cycle must also stay right.
#include <gtest/gtest.h>

#include <vector>

#include "tests/coll/ranks.h"

namespace qccl::test {
namespace {

TEST(Lifecycle, AThousandInitCollectiveDestroyCycles) {
  constexpr int kCycles = 1000;
  constexpr size_t kCount = 4096;  // above QCCL_MIN_BYTES's reach (minBytes 0): compressed
  CommOptions options;
  options.codec = "fp8e4m3";
  for (int cycle = 0; cycle < kCycles; ++cycle) {
    runRanks(2, options, [&](int rank, qcclComm_t comm) {
      std::vector<float> x(kCount, float(rank + 1)), sum(kCount);
      if (qcclAllReduce(x.data(), sum.data(), kCount, qcclFloat32, qcclSum, comm, nullptr) !=
          qcclSuccess) {
        ADD_FAILURE() << "cycle " << cycle << ": " << qcclGetLastError(comm);
        return;
      }
      if (sum[0] != 3.0f || sum[kCount - 1] != 3.0f) {  // 1 + 2 is exact in fp8e4m3
        ADD_FAILURE() << "cycle " << cycle << ": sum " << sum[0];
      }
      uint64_t sent = 0, received = 0;
      qcclCommWireBytes(comm, &sent, &received);
      if (sent == 0 || sent >= kCount * sizeof(float)) {  // compressed: fp8 is a quarter of fp32
        ADD_FAILURE() << "cycle " << cycle << ": " << sent << " bytes sent";
      }
    });
    if (::testing::Test::HasFailure()) return;
  }
}

}  // namespace
}  // namespace qccl::test
