// Device buffers through the collectives, on one GPU (CI has none: these skip):
// - ranks as threads on the GPU, over the test suite's stand-in NCCL (which reads and writes
//   device memory): every compressed collective gives, on every rank, the host path's bits on the
//   same data, over two calls (error feedback), at 2, 3 and 4 ranks;
// - device buffers on a communicator without NCCL go through pinned host memory: the host path's
//   bits too;
// - NCCL itself at one rank: the exact collectives, a compressed allreduce
//   (QCCL_COMPRESS_ONE_RANK) that matches the host path, and the same call captured into a CUDA
//   graph and replayed;
// - ranks that disagree on a device call: the decode kernels refuse the chunk, and the
//   communicator reports qcclInvalidUsage asynchronously.
#include <gtest/gtest.h>

#include <cstdlib>
#include <mutex>

#include "qccl/qccl_codec.h"
#include "tests/coll/collective_reference.h"
#include "tests/coll/ranks.h"
#include "tests/gpu/gpu_test_util.h"

namespace qccl::test {
namespace {

enum class Kind { Allreduce, ReduceScatter, Allgather };

struct Case {
  std::string codec;
  Kind kind;
  qcclDataType_t dtype;
  int ranks;
};

std::string caseName(const Case& c) {
  const char* kinds[] = {"allreduce", "reducescatter", "allgather"};
  return specTestName(c.codec) + "_" + kinds[int(c.kind)] + "_" + dtypeName(c.dtype) + "_" +
         std::to_string(c.ranks) + "ranks";
}

void PrintTo(const Case& c, std::ostream* os) { *os << caseName(c); }

constexpr size_t kCount = 100003;
constexpr int kCalls = 2;

// Every rank's outputs of kCalls calls on device (device = true) or host buffers.
std::vector<std::vector<uint8_t>> run(const Case& c, const char* transport, bool device,
                                      const qcclUniqueId& id) {
  std::vector<std::vector<uint8_t>> outputs(static_cast<size_t>(c.ranks));
  CommOptions options;
  options.transport = transport;
  options.codec = c.codec.c_str();
  options.id = &id;
  runRanks(c.ranks, options, [&](int r, qcclComm_t comm) {
    const size_t n = size_t(c.ranks), w = typeBytes(c.dtype);
    const size_t inCount = c.kind == Kind::ReduceScatter ? kCount * n : kCount;
    const size_t outCount = c.kind == Kind::Allgather ? kCount * n : kCount;
    std::vector<uint8_t> in, out(outCount * w), all;
    DeviceBytes dIn(inCount * w), dOut(outCount * w);
    cudaStream_t stream = nullptr;
    if (device) cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    for (int call = 0; call < kCalls; ++call) {
      std::vector<double> values;
      makeInput(r + 5 * call, inCount, c.dtype, in, values);
      const void* send = in.data();
      void* recv = out.data();
      if (device) {
        dIn.put(in);
        send = dIn.data();
        recv = dOut.data();
      }
      qcclResult_t rc;
      if (c.kind == Kind::Allreduce) {
        rc = qcclAllReduce(send, recv, kCount, c.dtype, qcclAvg, comm, stream);
      } else if (c.kind == Kind::ReduceScatter) {
        rc = qcclReduceScatter(send, recv, kCount, c.dtype, qcclSum, comm, stream);
      } else {
        rc = qcclAllGather(send, recv, kCount, c.dtype, comm, stream);
      }
      if (rc != qcclSuccess) ADD_FAILURE() << "rank " << r << ": " << qcclGetLastError(comm);
      if (device) {
        cudaStreamSynchronize(stream);
        out = dOut.get();
      }
      all.insert(all.end(), out.begin(), out.end());
    }
    qcclResult_t async = qcclSuccess;
    qcclCommGetAsyncError(comm, &async);
    if (async != qcclSuccess) ADD_FAILURE() << "rank " << r << ": asynchronous error " << async;
    if (stream) cudaStreamDestroy(stream);
    outputs[size_t(r)] = std::move(all);
  });
  return outputs;
}

class DeviceCollectives : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override { QCCL_SKIP_WITHOUT_GPU(); }
};

TEST_P(DeviceCollectives, HostPathBitsOnOneGpu) {
  const Case& c = GetParam();
  setenv("QCCL_NCCL_LIB", QCCL_STANDIN_NCCL, 1);
  qcclUniqueId id;
  ASSERT_EQ(qcclGetUniqueId(&id), qcclSuccess);
  const auto onDevice = run(c, "nccl", true, id);
  setenv("QCCL_SEGMENT_BYTES", "0", 1);  // the stream schedules' one segment per chunk
  const auto onHost = run(c, "local", false, id);
  unsetenv("QCCL_SEGMENT_BYTES");
  for (int r = 0; r < c.ranks; ++r) {
    ASSERT_TRUE(onDevice[size_t(r)] == onHost[size_t(r)]) << "rank " << r;
  }
}

std::vector<Case> cases() {
  std::vector<Case> all;
  for (const char* codec : {"fp8e4m3", "fp8e5m2+sr", "mxfp8", "mxfp4", "nvfp4", "nvfp4+rht",
                            "fp4ue5m3", "int8", "int4+rht", "bf16", "fp16+sr", "sign1"}) {
    for (Kind k : {Kind::Allreduce, Kind::ReduceScatter, Kind::Allgather}) {
      all.push_back({codec, k, qcclFloat32, 3});
    }
  }
  for (int ranks : {2, 4}) {
    for (qcclDataType_t t : {qcclFloat32, qcclBfloat16, qcclFloat16}) {
      all.push_back({"fp8e4m3", Kind::Allreduce, t, ranks});
      all.push_back({"nvfp4", Kind::ReduceScatter, t, ranks});
      all.push_back({"int4", Kind::Allgather, t, ranks});
    }
  }
  return all;
}

INSTANTIATE_TEST_SUITE_P(Cases, DeviceCollectives, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return caseName(info.param); });

// Device buffers on a communicator without NCCL: staged through pinned host memory, the host
// path (pipelined, as configured) gives its own bits.
TEST(DeviceStaged, HostTransportCarriesDeviceBuffers) {
  QCCL_SKIP_WITHOUT_GPU();
  const Case c{"int4", Kind::Allreduce, qcclFloat32, 3};
  qcclUniqueId id;
  ASSERT_EQ(qcclGetUniqueId(&id), qcclSuccess);
  const auto staged = run(c, "local", true, id);
  const auto host = run(c, "local", false, id);
  for (int r = 0; r < c.ranks; ++r) ASSERT_TRUE(staged[size_t(r)] == host[size_t(r)]) << r;
}

// NCCL itself, one rank: exact collectives; a compressed allreduce (QCCL_COMPRESS_ONE_RANK) with
// the host path's bits; and that call captured into a CUDA graph, replayed on new data.
TEST(DeviceNccl, OneRankExactCompressedAndCaptured) {
  QCCL_SKIP_WITHOUT_GPU();
  unsetenv("QCCL_NCCL_LIB");  // the real NCCL
  setenv("QCCL_COMPRESS_ONE_RANK", "1", 1);
  qcclUniqueId id;
  ASSERT_EQ(qcclGetUniqueId(&id), qcclSuccess);
  qcclConfig_t config = QCCL_CONFIG_INITIALIZER;
  config.transport = "nccl";
  config.codec = "nvfp4";
  config.minBytes = 0;
  qcclComm_t comm = nullptr;
  ASSERT_EQ(qcclCommInitRankConfig(&comm, 1, id, 0, &config), qcclSuccess)
      << qcclGetLastError(nullptr);
  cudaStream_t stream;
  CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  std::vector<uint8_t> in;
  std::vector<double> values;
  makeInput(0, kCount, qcclFloat32, in, values);
  DeviceBytes dIn(in), dOut(in.size());

  std::vector<int32_t> ints(4096);
  for (size_t i = 0; i < ints.size(); ++i) ints[i] = int32_t(i * 7 - 100);
  std::vector<uint8_t> intBytes(ints.size() * 4);
  std::memcpy(intBytes.data(), ints.data(), intBytes.size());
  DeviceBytes dInts(intBytes), dIntsOut(intBytes.size());
  ASSERT_EQ(
      qcclAllReduce(dInts.data(), dIntsOut.data(), ints.size(), qcclInt32, qcclMax, comm, stream),
      qcclSuccess)
      << qcclGetLastError(comm);
  ASSERT_EQ(qcclBroadcast(dInts.data(), dIntsOut.data(), ints.size(), qcclInt32, 0, comm, stream),
            qcclSuccess);
  ASSERT_EQ(qcclBarrier(comm, stream), qcclSuccess);
  CUDA_OK(cudaStreamSynchronize(stream));
  EXPECT_EQ(dIntsOut.get(), intBytes) << "exact collectives over NCCL";

  qcclCallConfig_t noEf = QCCL_CALL_CONFIG_INITIALIZER;
  noEf.flags = QCCL_CALL_NO_EF;  // outputs depend on the input alone
  ASSERT_EQ(
      qcclAllReduceEx(dIn.data(), dOut.data(), kCount, qcclFloat32, qcclSum, comm, stream, &noEf),
      qcclSuccess)
      << qcclGetLastError(comm);
  CUDA_OK(cudaStreamSynchronize(stream));
  const std::vector<uint8_t> direct = dOut.get();
  {  // the host path on the same data, with the same seed
    CommOptions options;
    options.codec = "nvfp4";
    options.id = &id;
    std::vector<uint8_t> hostOut(in.size());
    setenv("QCCL_SEGMENT_BYTES", "0", 1);
    runRanks(1, options, [&](int, qcclComm_t host) {
      EXPECT_EQ(qcclAllReduceEx(in.data(), hostOut.data(), kCount, qcclFloat32, qcclSum, host,
                                nullptr, &noEf),
                qcclSuccess);
    });
    unsetenv("QCCL_SEGMENT_BYTES");
    EXPECT_TRUE(direct == hostOut) << "device and host compressed allreduce differ";
  }

  // Capture the same call (its workspace exists since the call above) and replay it on new data.
  cudaGraph_t graph;
  CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  const qcclResult_t captured =
      qcclAllReduceEx(dIn.data(), dOut.data(), kCount, qcclFloat32, qcclSum, comm, stream, &noEf);
  CUDA_OK(cudaStreamEndCapture(stream, &graph));
  ASSERT_EQ(captured, qcclSuccess) << qcclGetLastError(comm);
  cudaGraphExec_t exec;
  CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
  std::vector<uint8_t> other;
  makeInput(1, kCount, qcclFloat32, other, values);
  dIn.put(other);
  CUDA_OK(cudaGraphLaunch(exec, stream));
  CUDA_OK(cudaStreamSynchronize(stream));
  const std::vector<uint8_t> replayed = dOut.get();
  ASSERT_EQ(
      qcclAllReduceEx(dIn.data(), dOut.data(), kCount, qcclFloat32, qcclSum, comm, stream, &noEf),
      qcclSuccess);
  CUDA_OK(cudaStreamSynchronize(stream));
  EXPECT_TRUE(replayed == dOut.get()) << "the replayed graph and a direct call differ";
  EXPECT_FALSE(replayed == direct) << "the replay did not read the new data";
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
  EXPECT_EQ(qcclCommDestroy(comm), qcclSuccess);
  unsetenv("QCCL_COMPRESS_ONE_RANK");
}

// Ranks that disagree on a device call's codec (the same chunk sizes): the decode kernels refuse
// the chunks, and the communicator fails with qcclInvalidUsage, seen without waiting.
TEST(DeviceMisuse, DisagreementRaisesTheAsynchronousError) {
  QCCL_SKIP_WITHOUT_GPU();
  setenv("QCCL_NCCL_LIB", QCCL_STANDIN_NCCL, 1);
  CommOptions options;
  options.transport = "nccl";
  options.codec = "fp8e4m3";
  std::mutex mutex;
  runRanks(2, options, [&](int r, qcclComm_t comm) {
    DeviceBytes in(4 * 30000), out(4 * 30000);
    cudaMemset(in.data(), 0, in.size());
    qcclCallConfig_t config = QCCL_CALL_CONFIG_INITIALIZER;
    config.codec = r == 1 ? "fp8e5m2" : "fp8e4m3";
    EXPECT_EQ(
        qcclAllReduceEx(in.data(), out.data(), 30000, qcclFloat32, qcclSum, comm, nullptr, &config),
        qcclSuccess);  // enqueued: the kernels find it later
    cudaDeviceSynchronize();
    qcclResult_t async = qcclSuccess;
    EXPECT_EQ(qcclCommGetAsyncError(comm, &async), qcclSuccess);
    EXPECT_EQ(async, qcclInvalidUsage) << "rank " << r;
    EXPECT_EQ(qcclAllReduce(in.data(), out.data(), 30000, qcclFloat32, qcclSum, comm, nullptr),
              qcclInvalidUsage);
  });
}

// The codec API on device buffers: the host's bytes and values; a chunk that does not match is
// refused before anything is written.
TEST(DeviceCodecApi, EncodeAndDecodeOnAStream) {
  QCCL_SKIP_WITHOUT_GPU();
  qcclCodec_t codec;
  ASSERT_EQ(qcclCodecParse("nvfp4+rht", &codec), qcclSuccess);
  std::vector<uint8_t> in;
  std::vector<double> values;
  makeInput(3, kCount, qcclFloat32, in, values);
  size_t bytes = 0;
  ASSERT_EQ(qcclCodecEncodedSize(codec, kCount, qcclFloat32, &bytes), qcclSuccess);
  std::vector<uint8_t> want(bytes), decoded(in.size());
  qcclEncodeOptions_t options = QCCL_ENCODE_OPTIONS_INITIALIZER;
  options.seed = 11;
  ASSERT_EQ(
      qcclEncode(codec, in.data(), kCount, qcclFloat32, want.data(), bytes, &options, nullptr),
      qcclSuccess);
  ASSERT_EQ(qcclDecode(codec, want.data(), bytes, decoded.data(), kCount, qcclFloat32, nullptr),
            qcclSuccess);
  cudaStream_t stream;
  CUDA_OK(cudaStreamCreate(&stream));
  DeviceBytes dIn(in), dChunk(bytes), dOut(in.size());
  ASSERT_EQ(
      qcclEncode(codec, dIn.data(), kCount, qcclFloat32, dChunk.data(), bytes, &options, stream),
      qcclSuccess)
      << qcclGetLastError(nullptr);
  ASSERT_EQ(qcclDecode(codec, dChunk.data(), bytes, dOut.data(), kCount, qcclFloat32, stream),
            qcclSuccess)
      << qcclGetLastError(nullptr);
  CUDA_OK(cudaStreamSynchronize(stream));
  EXPECT_EQ(dChunk.get(), want);
  EXPECT_EQ(dOut.get(), decoded);
  qcclCodec_t other;
  ASSERT_EQ(qcclCodecParse("int4", &other), qcclSuccess);
  EXPECT_EQ(qcclDecode(other, dChunk.data(), bytes, dOut.data(), kCount, qcclFloat32, stream),
            qcclInvalidUsage);
  EXPECT_EQ(
      qcclEncode(codec, dIn.data(), kCount, qcclFloat32, want.data(), bytes, &options, stream),
      qcclInvalidArgument);  // host output, device input
  cudaStreamDestroy(stream);
}

}  // namespace
}  // namespace qccl::test
