// The stream-ordered schedules (collectives/stream_schedule.h) over the NCCL exchange, with the
// test suite's stand-in NCCL on host memory: every compressed collective gives, on every rank,
// bit for bit what the tagged-transport schedule gives on the same data with the same seed (one
// segment per chunk, as the stream schedules use), over two calls (so the error-feedback
// residuals agree too); exact collectives match the reference; ranks that disagree all get an
// error and the communicator stays usable.
#include <gtest/gtest.h>

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

#include "tests/coll/collective_reference.h"
#include "tests/coll/ranks.h"

namespace qccl::test {
namespace {

enum class Kind { AllreduceSum, AllreduceAvg, ReduceScatter, Allgather };

struct Case {
  std::string codec;
  Kind kind;
  qcclDataType_t dtype;
  int ranks;
  bool inPlace;
};

std::string caseName(const Case& c) {
  const char* kinds[] = {"allreduce_sum", "allreduce_avg", "reducescatter", "allgather"};
  return specTestName(c.codec) + "_" + kinds[int(c.kind)] + "_" + dtypeName(c.dtype) + "_" +
         std::to_string(c.ranks) + "ranks" + (c.inPlace ? "_inplace" : "");
}

void PrintTo(const Case& c, std::ostream* os) { *os << caseName(c); }

constexpr size_t kCount = 10007;  // the vector (allreduce) or each rank's share
constexpr int kCalls = 2;

void useStandinNccl() { setenv("QCCL_NCCL_LIB", QCCL_STANDIN_NCCL, 1); }

// Every rank's outputs of kCalls calls, concatenated.
std::vector<std::vector<uint8_t>> run(const Case& c, const char* transport,
                                      const qcclUniqueId& id) {
  std::vector<std::vector<uint8_t>> outputs(static_cast<size_t>(c.ranks));
  CommOptions options;
  options.transport = transport;
  options.codec = c.codec.c_str();
  options.id = &id;
  runRanks(c.ranks, options, [&](int r, qcclComm_t comm) {
    const size_t n = size_t(c.ranks), w = typeBytes(c.dtype);
    const bool allreduce = c.kind == Kind::AllreduceSum || c.kind == Kind::AllreduceAvg;
    const size_t inCount = c.kind == Kind::ReduceScatter ? kCount * n : kCount;
    const size_t outCount = c.kind == Kind::Allgather ? kCount * n : kCount;
    std::vector<uint8_t> all;
    // The buffers stay from call to call, as a DDP bucket does: the second call finds the first
    // one's residuals (their key is derived from the send buffer's address).
    std::vector<uint8_t> in, out(outCount * w);
    std::vector<uint8_t> buffer(std::max(inCount, outCount) * w);  // in place: one buffer
    for (int call = 0; call < kCalls; ++call) {
      std::vector<double> values;
      makeInput(r + 7 * call, inCount, c.dtype, in, values);
      std::fill(out.begin(), out.end(), 0xEE);
      qcclResult_t rc;
      if (allreduce) {
        std::copy(in.begin(), in.end(), buffer.begin());
        const qcclRedOp_t op = c.kind == Kind::AllreduceSum ? qcclSum : qcclAvg;
        rc = qcclAllReduce(c.inPlace ? buffer.data() : in.data(),
                           c.inPlace ? buffer.data() : out.data(), kCount, c.dtype, op, comm,
                           nullptr);
        if (c.inPlace) out.assign(buffer.begin(), buffer.begin() + long(outCount * w));
      } else if (c.kind == Kind::ReduceScatter) {
        std::copy(in.begin(), in.end(), buffer.begin());
        uint8_t* recv = c.inPlace ? buffer.data() + size_t(r) * kCount * w : out.data();
        rc = qcclReduceScatter(c.inPlace ? buffer.data() : in.data(), recv, kCount, c.dtype,
                               qcclSum, comm, nullptr);
        if (c.inPlace) out.assign(recv, recv + kCount * w);
      } else {
        uint8_t* send = c.inPlace ? buffer.data() + size_t(r) * kCount * w : in.data();
        std::copy(in.begin(), in.end(), send);
        rc = qcclAllGather(send, c.inPlace ? buffer.data() : out.data(), kCount, c.dtype, comm,
                           nullptr);
        if (c.inPlace) out.assign(buffer.begin(), buffer.begin() + long(outCount * w));
      }
      if (rc != qcclSuccess) ADD_FAILURE() << "rank " << r << ": " << qcclGetLastError(comm);
      all.insert(all.end(), out.begin(), out.end());
    }
    outputs[size_t(r)] = std::move(all);
  });
  return outputs;
}

class StreamSchedule : public ::testing::TestWithParam<Case> {};

TEST_P(StreamSchedule, SameBitsAsTheTaggedSchedule) {
  const Case& c = GetParam();
  useStandinNccl();
  qcclUniqueId id;
  ASSERT_EQ(qcclGetUniqueId(&id), qcclSuccess);
  // NCCL first: its bootstrap uses the unique id's root, which serves one communicator.
  const auto streamed = run(c, "nccl", id);
  setenv("QCCL_SEGMENT_BYTES", "0", 1);  // read at init, before the rank threads start
  const auto tagged = run(c, "local", id);
  unsetenv("QCCL_SEGMENT_BYTES");
  for (int r = 0; r < c.ranks; ++r) {
    ASSERT_EQ(streamed[size_t(r)].size(), tagged[size_t(r)].size());
    ASSERT_TRUE(streamed[size_t(r)] == tagged[size_t(r)]) << "rank " << r;
  }
}

std::vector<Case> cases() {
  std::vector<Case> all;
  for (const char* codec :
       {"fp8e4m3", "fp8e5m2+sr", "mxfp8", "mxfp4", "nvfp4", "nvfp4+rht", "fp4ue5m3", "int8",
        "int4+rht", "int4/b32", "bf16", "fp16+sr", "sign1"}) {
    for (Kind k : {Kind::AllreduceSum, Kind::AllreduceAvg, Kind::ReduceScatter, Kind::Allgather}) {
      all.push_back({codec, k, qcclFloat32, 3, false});
    }
  }
  for (const char* codec : {"fp8e4m3", "nvfp4", "int4"}) {
    for (qcclDataType_t t : {qcclBfloat16, qcclFloat16}) {
      for (Kind k : {Kind::AllreduceAvg, Kind::ReduceScatter, Kind::Allgather}) {
        all.push_back({codec, k, t, 2, false});
      }
    }
    for (Kind k : {Kind::AllreduceSum, Kind::ReduceScatter, Kind::Allgather}) {
      all.push_back({codec, k, qcclFloat32, 4, true});
    }
  }
  return all;
}

INSTANTIATE_TEST_SUITE_P(Cases, StreamSchedule, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return caseName(info.param); });

// Exact calls are the library's own collectives: checked against the reference.
TEST(StreamScheduleExact, CollectivesMatchTheReference) {
  useStandinNccl();
  constexpr int kRanks = 3;
  constexpr size_t kElems = 1001;
  CommOptions options;
  options.transport = "nccl";
  options.codec = "fp8e4m3";  // int32 and Max stay exact whatever the codec
  runRanks(kRanks, options, [&](int r, qcclComm_t comm) {
    std::vector<std::vector<uint8_t>> in(kRanks);
    std::vector<std::vector<double>> values(kRanks);
    for (int p = 0; p < kRanks; ++p)
      makeInput(p, kElems * kRanks, qcclInt32, in[size_t(p)], values[size_t(p)]);
    const auto* mine = in[size_t(r)].data();
    std::vector<int32_t> out(kElems * kRanks);
    EXPECT_EQ(qcclAllReduce(mine, out.data(), kElems, qcclInt32, qcclSum, comm, nullptr),
              qcclSuccess);
    for (size_t i = 0; i < kElems; ++i) {
      double sum = 0;
      for (int p = 0; p < kRanks; ++p) sum += values[size_t(p)][i];
      if (out[i] != int32_t(sum)) ADD_FAILURE() << "allreduce " << i;
    }
    EXPECT_EQ(qcclReduceScatter(mine, out.data(), kElems, qcclInt32, qcclMax, comm, nullptr),
              qcclSuccess);
    for (size_t i = 0; i < kElems; ++i) {
      double max = -1e300;
      for (int p = 0; p < kRanks; ++p)
        max = std::max(max, values[size_t(p)][size_t(r) * kElems + i]);
      if (out[i] != int32_t(max)) ADD_FAILURE() << "reduce-scatter " << i;
    }
    EXPECT_EQ(qcclAllGather(mine, out.data(), kElems, qcclInt32, comm, nullptr), qcclSuccess);
    for (int p = 0; p < kRanks; ++p) {
      if (std::memcmp(out.data() + size_t(p) * kElems, in[size_t(p)].data(), kElems * 4) != 0)
        ADD_FAILURE() << "allgather from " << p;
    }
    EXPECT_EQ(qcclBroadcast(mine, out.data(), kElems, qcclInt32, 1, comm, nullptr), qcclSuccess);
    if (std::memcmp(out.data(), in[1].data(), kElems * 4) != 0) ADD_FAILURE() << "broadcast";
    std::vector<int32_t> block(kElems * kRanks);
    std::memcpy(block.data(), mine, block.size() * 4);  // in place
    EXPECT_EQ(qcclAlltoAll(block.data(), block.data(), kElems, qcclInt32, comm, nullptr),
              qcclSuccess);
    for (int p = 0; p < kRanks; ++p) {
      if (std::memcmp(block.data() + size_t(p) * kElems,
                      in[size_t(p)].data() + size_t(r) * kElems * 4, kElems * 4) != 0)
        ADD_FAILURE() << "alltoall from " << p;
    }
    EXPECT_EQ(qcclBarrier(comm, nullptr), qcclSuccess);
    EXPECT_EQ(qcclCommFinalize(comm), qcclSuccess);
  });
}

// Ranks that disagree: every one gets an error, and the next (agreeing) call works.
TEST(StreamScheduleMisuse, DisagreementFailsEveryRankAndTheCommunicatorGoesOn) {
  useStandinNccl();
  constexpr int kRanks = 3;
  CommOptions options;
  options.transport = "nccl";
  options.codec = "fp8e4m3";
  runRanks(kRanks, options, [&](int r, qcclComm_t comm) {
    std::vector<float> in(30000, 1.0f), out(30000);
    qcclCallConfig_t config = QCCL_CALL_CONFIG_INITIALIZER;
    config.codec = r == 1 ? "fp8e5m2" : "fp8e4m3";  // the same chunk sizes, another codec
    EXPECT_EQ(qcclAllReduceEx(in.data(), out.data(), in.size(), qcclFloat32, qcclSum, comm, nullptr,
                              &config),
              qcclInvalidUsage)
        << "rank " << r;
    const size_t count = r == 2 ? 29000 : 30000;  // another size on the wire
    EXPECT_NE(qcclAllReduce(in.data(), out.data(), count, qcclFloat32, qcclSum, comm, nullptr),
              qcclSuccess)
        << "rank " << r;
    EXPECT_EQ(qcclAllReduce(in.data(), out.data(), in.size(), qcclFloat32, qcclSum, comm, nullptr),
              qcclSuccess)
        << "rank " << r << ": " << qcclGetLastError(comm);
    for (float v : out) {
      if (std::fabs(v - 3.0f) > 0.05f) {
        ADD_FAILURE() << "rank " << r << " got " << v;
        break;
      }
    }
  });
}

// The stand-in NCCL's own entry points, for a test that makes NCCL communicators itself.
struct StandinNccl {
  using UniqueId = struct { char internal[128]; };
  int (*getUniqueId)(UniqueId*);
  int (*commInitRank)(void**, int, UniqueId, int);
  int (*commDestroy)(void*);
  int (*allReduce)(const void*, void*, size_t, int, int, void*, cudaStream_t);

  StandinNccl() {
    void* lib = dlopen(QCCL_STANDIN_NCCL, RTLD_NOW | RTLD_LOCAL);
    getUniqueId = reinterpret_cast<decltype(getUniqueId)>(dlsym(lib, "ncclGetUniqueId"));
    commInitRank = reinterpret_cast<decltype(commInitRank)>(dlsym(lib, "ncclCommInitRank"));
    commDestroy = reinterpret_cast<decltype(commDestroy)>(dlsym(lib, "ncclCommDestroy"));
    allReduce = reinterpret_cast<decltype(allReduce)>(dlsym(lib, "ncclAllReduce"));
  }
};

// An application's NCCL communicator, adopted: rank and size are NCCL's, the collectives run
// over it (the compressed ones bit for bit as over qccl's own NCCL communicator), and it stays
// the application's after qcclCommDestroy.
TEST(StreamScheduleAdopted, CollectivesOverTheApplicationsNcclCommunicator) {
  useStandinNccl();
  const StandinNccl nccl;
  constexpr int kRanks = 3;
  StandinNccl::UniqueId ncclId;
  ASSERT_EQ(nccl.getUniqueId(&ncclId), 0);
  const Case c{"int8", Kind::AllreduceSum, qcclFloat32, kRanks, false};
  qcclUniqueId id;
  ASSERT_EQ(qcclGetUniqueId(&id), qcclSuccess);
  const auto ours = run(c, "nccl", id);  // for the expected bits: adoption fixes another seed
  std::vector<std::vector<float>> adopted(kRanks);
  std::vector<std::thread> threads;
  for (int r = 0; r < kRanks; ++r) {
    threads.emplace_back([&, r] {
      void* app = nullptr;
      ASSERT_EQ(nccl.commInitRank(&app, kRanks, ncclId, r), 0);
      qcclConfig_t config = QCCL_CONFIG_INITIALIZER;
      config.codec = "int8";
      config.minBytes = 0;
      qcclComm_t comm = nullptr;
      ASSERT_EQ(qcclCommInitFromNccl(&comm, static_cast<ncclComm*>(app), &config), qcclSuccess)
          << qcclGetLastError(nullptr);
      int rank = -1, count = -1;
      EXPECT_EQ(qcclCommUserRank(comm, &rank), qcclSuccess);
      EXPECT_EQ(qcclCommCount(comm, &count), qcclSuccess);
      EXPECT_EQ(rank, r);
      EXPECT_EQ(count, kRanks);
      std::vector<uint8_t> in;
      std::vector<double> values;
      makeInput(r, kCount, qcclFloat32, in, values);
      adopted[size_t(r)].resize(kCount);
      EXPECT_EQ(qcclAllReduce(in.data(), adopted[size_t(r)].data(), kCount, qcclFloat32, qcclSum,
                              comm, nullptr),
                qcclSuccess)
          << qcclGetLastError(comm);
      EXPECT_EQ(qcclCommDestroy(comm), qcclSuccess);
      float one = 1.0f, sum = 0.0f;  // the application's communicator still works
      EXPECT_EQ(nccl.allReduce(&one, &sum, 1, qcclFloat32, qcclSum, app, nullptr), 0);
      EXPECT_EQ(sum, float(kRanks));
      EXPECT_EQ(nccl.commDestroy(app), 0);
    });
  }
  for (std::thread& t : threads) t.join();
  for (int r = 0; r < kRanks; ++r) {
    EXPECT_EQ(adopted[size_t(r)], adopted[0]) << "rank " << r << " differs";
    // int8 uses no seed: the same bits as qccl's own communicator gave (first call).
    EXPECT_EQ(0, std::memcmp(adopted[size_t(r)].data(), ours[size_t(r)].data(), kCount * 4));
  }
  EXPECT_EQ(qcclCommInitFromNccl(nullptr, nullptr, nullptr), qcclInvalidArgument);
  qcclComm_t comm;
  EXPECT_EQ(qcclCommInitFromNccl(&comm, nullptr, nullptr), qcclInvalidArgument);
}

}  // namespace
}  // namespace qccl::test
