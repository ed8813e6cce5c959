// Pipelining changes when bytes move, not what they are: allreduce, reduce-scatter and allgather
// cut into many small segments give bitwise the outputs of unsegmented calls on every rank, in
// place and out of place, and so do second calls (the error-feedback residuals agree too). nvfp4
// is the exception by design (its per-chunk scale becomes per segment): there only identical on
// every rank. Exact calls (codec none) compare the pipelined path with the framed one.
#include <gtest/gtest.h>

#include <cstdlib>
#include <mutex>

#include "tests/coll/collective_reference.h"
#include "tests/coll/ranks.h"

namespace qccl::test {
namespace {

enum class Kind { Allreduce, ReduceScatter, Allgather };

struct Case {
  std::string codec;
  Kind kind;
  bool inPlace;
};

std::string caseName(const Case& c) {
  const char* kinds[] = {"allreduce", "reducescatter", "allgather"};
  return specTestName(c.codec) + "_" + kinds[int(c.kind)] + (c.inPlace ? "_inplace" : "");
}

void PrintTo(const Case& c, std::ostream* os) { *os << caseName(c); }

constexpr int kRanks = 3;
constexpr size_t kCount = 100003;  // per rank's share for reduce-scatter and allgather
constexpr int kCalls = 2;

// Every rank's outputs of kCalls calls, concatenated, with QCCL_SEGMENT_BYTES = segmentBytes; id
// fixes the seed of +sr and +rht.
std::vector<std::vector<uint8_t>> run(const Case& c, const char* segmentBytes,
                                      const qcclUniqueId& id) {
  setenv("QCCL_SEGMENT_BYTES", segmentBytes, 1);  // read at init, before the rank threads start
  std::vector<std::vector<uint8_t>> outputs(static_cast<size_t>(kRanks));
  std::mutex mutex;
  CommOptions options;
  options.codec = c.codec.c_str();
  options.id = &id;
  runRanks(kRanks, options, [&](int r, qcclComm_t comm) {
    std::vector<uint8_t> all;
    // The buffers stay, as a DDP bucket does: the second call finds the first one's residuals.
    const size_t inCount = c.kind == Kind::Allgather ? kCount : kCount * kRanks;
    const size_t outCount = c.kind == Kind::ReduceScatter ? kCount : kCount * kRanks;
    std::vector<uint8_t> in, out(outCount * 4);
    for (int call = 0; call < kCalls; ++call) {
      std::vector<double> values;
      makeInput(r + call, inCount, qcclFloat32, in, values);
      qcclResult_t rc = qcclSuccess;
      if (c.kind == Kind::Allreduce) {
        void* recv = c.inPlace ? in.data() : out.data();
        rc = qcclAllReduce(in.data(), recv, inCount, qcclFloat32, qcclSum, comm, nullptr);
        if (c.inPlace) out = in;
      } else if (c.kind == Kind::ReduceScatter) {
        uint8_t* recv = c.inPlace ? in.data() + size_t(r) * kCount * 4 : out.data();
        rc = qcclReduceScatter(in.data(), recv, kCount, qcclFloat32, qcclSum, comm, nullptr);
        if (c.inPlace) std::memcpy(out.data(), recv, kCount * 4);
      } else {
        if (c.inPlace) std::memcpy(out.data() + size_t(r) * kCount * 4, in.data(), in.size());
        const void* send = c.inPlace ? out.data() + size_t(r) * kCount * 4 : in.data();
        rc = qcclAllGather(send, out.data(), kCount, qcclFloat32, comm, nullptr);
      }
      if (rc != qcclSuccess) {
        std::lock_guard<std::mutex> lock(mutex);
        ADD_FAILURE() << "rank " << r << ": " << qcclGetLastError(nullptr);
      }
      all.insert(all.end(), out.begin(), out.end());
    }
    std::lock_guard<std::mutex> lock(mutex);
    outputs[size_t(r)] = std::move(all);
  });
  unsetenv("QCCL_SEGMENT_BYTES");
  return outputs;
}

class Pipeline : public ::testing::TestWithParam<Case> {};

TEST_P(Pipeline, SegmentsChangeNoBit) {
  const Case& c = GetParam();
  qcclUniqueId id;
  ASSERT_EQ(qcclGetUniqueId(&id), qcclSuccess);
  const auto segmented = run(c, "4096", id);  // 1024 elements: dozens of segments per chunk
  const auto whole = run(c, "0", id);
  const bool sameAsWhole = c.codec.rfind("nvfp4", 0) != 0;
  for (int r = 0; r < kRanks; ++r) {
    if (c.kind != Kind::ReduceScatter) {
      ASSERT_EQ(segmented[size_t(r)], segmented[0]) << "rank " << r << " differs from rank 0";
    }
    if (sameAsWhole) {
      ASSERT_EQ(segmented[size_t(r)], whole[size_t(r)]) << "rank " << r;
    }
  }
}

std::vector<Case> cases() {
  std::vector<Case> all;
  for (const char* codec :
       {"fp8e4m3", "int8", "mxfp4", "int4+rht", "fp8e5m2+sr", "bf16", "nvfp4"}) {
    for (Kind kind : {Kind::Allreduce, Kind::ReduceScatter, Kind::Allgather}) {
      all.push_back({codec, kind, kind == Kind::Allreduce});
    }
  }
  all.push_back({"int8", Kind::ReduceScatter, true});
  all.push_back({"mxfp4", Kind::Allgather, true});
  for (Kind kind : {Kind::Allreduce, Kind::ReduceScatter, Kind::Allgather}) {
    for (bool inPlace : {false, true}) all.push_back({"none", kind, inPlace});
  }
  return all;
}

INSTANTIATE_TEST_SUITE_P(Cases, Pipeline, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return caseName(info.param); });

}  // namespace
}  // namespace qccl::test
