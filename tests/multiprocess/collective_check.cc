// The collectives between real processes, launched by qcclrun (UCX) or mpirun (MPI):
//   collective_check [quick]
//   collective_check soak SECONDS   (random checks until the time is up; docs/RELIABILITY.md)
// Every rank runs the same matrix of allreduce / reduce-scatter / allgather calls (rank counts
// come from the launcher; counts 0, 1, 7, 3001, 1000003 and a 12 MiB one; fp32, bf16, fp16,
// int32; Sum, Avg, Max; in-place and out-of-place; every codec) and checks each result: bitwise
// identical on every rank (an exact allgather of output hashes), within the codec-derived bound
// of the exact result (every rank computes every rank's input itself), and, under MPI, exact
// results against MPI_Allreduce. Then error feedback over 100 steps. Exits non-zero on any
// failure.
#include <qccl/qccl.h>

#include <malloc.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "tests/coll/collective_reference.h"
#if QCCL_CHECK_WITH_MPI
#include <mpi.h>
#endif

namespace {

using namespace qccl::test;

int rank = 0, nranks = 1, failures = 0, checks = 0;
bool underMpi = false;  // launched by mpirun: exact results are also compared with MPI's
qcclComm_t comm = nullptr;

void fail(const std::string& what) {
  if (++failures <= 20) std::printf("FAIL rank %d: %s\n", rank, what.c_str());
}

uint64_t hashBytes(const std::vector<uint8_t>& b) {
  uint64_t h = 1469598103934665603ull;
  for (uint8_t c : b) h = (h ^ c) * 1099511628211ull;
  return h;
}

// True when every rank holds the same bytes.
bool identicalEverywhere(const std::vector<uint8_t>& bytes) {
  const uint64_t mine = hashBytes(bytes);
  std::vector<uint64_t> all(static_cast<size_t>(nranks));
  if (qcclAllGather(&mine, all.data(), 1, qcclUint64, comm, nullptr) != qcclSuccess) {
    fail(std::string("hash allgather: ") + qcclGetLastError(nullptr));
    return false;
  }
  for (uint64_t h : all) {
    if (h != mine) return false;
  }
  return true;
}

qcclCallConfig_t callConfig(const char* codec) {
  qcclCallConfig_t c = QCCL_CALL_CONFIG_INITIALIZER;
  c.codec = codec;
  c.flags = QCCL_CALL_NO_EF;  // first-call numerics: the bounds assume zero residuals
  return c;
}

std::vector<std::vector<double>> allInputs(size_t count, qcclDataType_t dtype) {
  std::vector<std::vector<double>> inputs(static_cast<size_t>(nranks));
  for (int r = 0; r < nranks; ++r) {
    std::vector<uint8_t> bytes;
    makeInput(r, count, dtype, bytes, inputs[size_t(r)]);
  }
  return inputs;
}

// Rotated codecs (+rht) bound the L2 error in the rotated domain, which needs the communicator's
// seed (checked on threads in tests/coll); here, a sanity bound on the relative L2 error of the
// sum (divided by divisor) against result.
bool rotatedErrorOk(const std::vector<uint8_t>& result,
                    const std::vector<std::vector<double>>& inputs, qcclDataType_t dtype,
                    double divisor) {
  double e2 = 0, n2 = 0;
  for (size_t i = 0; i < inputs[0].size(); ++i) {
    double exact = 0;
    for (const auto& x : inputs) exact += x[i] / divisor;
    e2 += std::pow(readValue(result.data(), dtype, i) - exact, 2);
    n2 += exact * exact;
  }
  return std::sqrt(e2) <= 0.3 * std::sqrt(n2);
}

void checkAllreduce(const std::string& codecText, size_t count, qcclDataType_t dtype,
                    qcclRedOp_t op, bool inPlace) {
  ++checks;
  const std::string name = "allreduce " + codecText + " count " + std::to_string(count) +
                           " dtype " + std::to_string(int(dtype)) + " op " +
                           std::to_string(int(op)) + (inPlace ? " in-place" : "");
  std::vector<uint8_t> in;
  std::vector<double> mine;
  makeInput(rank, count, dtype, in, mine);
  const std::vector<uint8_t> original = in;
  std::vector<uint8_t> out(in.size(), 0xEE);
  uint8_t* recv = inPlace ? in.data() : out.data();
  const qcclCallConfig_t config = callConfig(codecText.c_str());
  if (qcclAllReduceEx(in.data(), recv, count, dtype, op, comm, nullptr, &config) != qcclSuccess) {
    return fail(name + ": " + qcclGetLastError(nullptr));
  }
  std::vector<uint8_t> result(recv, recv + in.size());
  if (!identicalEverywhere(result)) return fail(name + ": outputs differ between ranks");
  const qccl::codec::CodecSpec spec = qccl::codec::parseCodecSpec(codecText);
  const bool compressed =
      spec.format != qccl::codec::Format::None && dtype != qcclInt32 && op != qcclMax && nranks > 1;
  const std::vector<std::vector<double>> inputs = allInputs(count, dtype);
  std::vector<double> bound(count, 0.0);
  if (compressed && spec.rhtSize == 0) {
    const std::vector<qccl::coll::Span> spans =
        qccl::coll::partition(count, nranks, spec.block ? spec.block : 1);
    std::vector<OwnedSpan> chunks;
    for (int k = 0; k < nranks; ++k) chunks.push_back({spans[size_t(k)], k});
    bound = scatterReduceBound(spec, inputs, chunks);
  }
  const double divisor = op == qcclAvg ? nranks : 1;
  if (compressed && spec.rhtSize != 0) {
    if (!rotatedErrorOk(result, inputs, dtype, divisor))
      fail(name + ": relative L2 error above 0.3");
    return;
  }
  for (size_t i = 0; i < count; ++i) {
    double exact = inputs[0][i], absSum = 0;
    for (int r = 0; r < nranks; ++r) {
      const double v = inputs[size_t(r)][i];
      absSum += std::fabs(v);
      if (r > 0) exact = op == qcclMax ? std::max(exact, v) : exact + v;
    }
    const double want = dtype == qcclInt32 ? std::trunc(exact / divisor) : exact / divisor;
    double allowed = outputRounding(dtype, want) + (dtype == qcclInt32 ? 0 : 1e-6 * absSum);
    if (compressed) allowed += bound[i] / divisor;
    const double got = readValue(result.data(), dtype, i);
    if (!(std::fabs(got - want) <= allowed)) {
      return fail(name + ": element " + std::to_string(i) + " is " + std::to_string(got) +
                  ", exact " + std::to_string(want));
    }
  }
#if QCCL_CHECK_WITH_MPI
  // Exact paths against MPI_Allreduce: integers bit for bit, fp32 within reassociation.
  if (underMpi && !compressed && (dtype == qcclInt32 || dtype == qcclFloat32) && op != qcclAvg) {
    std::vector<uint8_t> reference(original.size());
    const MPI_Datatype t = dtype == qcclInt32 ? MPI_INT : MPI_FLOAT;
    MPI_Allreduce(original.data(), reference.data(), int(count), t,
                  op == qcclMax ? MPI_MAX : MPI_SUM, MPI_COMM_WORLD);
    for (size_t i = 0; i < count; ++i) {
      const double a = readValue(result.data(), dtype, i),
                   b = readValue(reference.data(), dtype, i);
      const double tolerance = dtype == qcclInt32 ? 0.0 : 4e-7 * nranks * (std::fabs(b) + 1.0);
      if (std::fabs(a - b) > tolerance) {
        return fail(name + ": MPI_Allreduce gives " + std::to_string(b) + " at element " +
                    std::to_string(i) + ", qccl " + std::to_string(a));
      }
    }
  }
#else
  (void)original;
#endif
}

void checkReduceScatterAndAllgather(const std::string& codecText, size_t count,
                                    qcclDataType_t dtype) {
  ++checks;
  const std::string name =
      "reduce-scatter/allgather " + codecText + " count " + std::to_string(count);
  std::vector<uint8_t> in;
  std::vector<double> mine;
  makeInput(rank, count * size_t(nranks), dtype, in, mine);
  std::vector<uint8_t> share(count * typeBytes(dtype));
  const qcclCallConfig_t config = callConfig(codecText.c_str());
  if (qcclReduceScatterEx(in.data(), share.data(), count, dtype, qcclSum, comm, nullptr, &config) !=
      qcclSuccess) {
    return fail(name + ": " + qcclGetLastError(nullptr));
  }
  std::vector<uint8_t> gathered(share.size() * size_t(nranks));
  if (qcclAllGatherEx(share.data(), gathered.data(), count, dtype, comm, nullptr, &config) !=
      qcclSuccess) {
    return fail(name + ": " + qcclGetLastError(nullptr));
  }
  if (!identicalEverywhere(gathered)) return fail(name + ": gathered replicas differ");
  const std::vector<std::vector<double>> inputs = allInputs(count * size_t(nranks), dtype);
  const qccl::codec::CodecSpec spec = qccl::codec::parseCodecSpec(codecText);
  const bool compressed = spec.format != qccl::codec::Format::None;
  if (compressed && spec.rhtSize != 0) {
    if (!rotatedErrorOk(gathered, inputs, dtype, 1)) fail(name + ": relative L2 error above 0.3");
    return;
  }
  // Reduce-scatter then allgather is scatter-reduce-allgather with share r owned by rank r.
  std::vector<double> bound(count * size_t(nranks), 0.0);
  if (compressed) {
    std::vector<OwnedSpan> shares;
    for (int r = 0; r < nranks; ++r)
      shares.push_back({{size_t(r) * count, size_t(r + 1) * count}, r});
    bound = scatterReduceBound(spec, inputs, shares);
  }
  for (size_t i = 0; i < bound.size(); ++i) {
    double exact = 0, absSum = 0;
    for (const auto& x : inputs) {
      exact += x[i];
      absSum += std::fabs(x[i]);
    }
    // The 16-bit reduce-scatter output is rounded before the allgather encodes it.
    const double allowed =
        bound[i] + 1e-6 * absSum + 2 * outputRounding(dtype, std::fabs(exact) + bound[i]);
    if (!(std::fabs(readValue(gathered.data(), dtype, i) - exact) <= allowed)) {
      return fail(name + ": element " + std::to_string(i) + " is " +
                  std::to_string(readValue(gathered.data(), dtype, i)) + ", exact " +
                  std::to_string(exact));
    }
  }
}

// Rank 1 calls with another count, then with another codec of the same chunk size: every rank
// must get qcclInvalidUsage (from sizes or chunk headers), and the next call must work. Then an
// exact call that the others pipeline and rank 1 does not.
void checkDisagreement() {
  ++checks;
  {
    std::vector<float> x(3u << 20, 1.0f), y(x.size());
    const size_t count = rank == 1 ? 3000 : x.size();
    if (qcclAllReduce(x.data(), y.data(), count, qcclFloat32, qcclSum, comm, nullptr) !=
        qcclInvalidUsage) {
      fail(std::string("exact count disagreement not reported: ") + qcclGetLastError(nullptr));
    }
  }
  std::vector<float> x(6000, 1.0f), y(6000);
  const size_t count = rank == 1 ? 5000 : 6000;
  qcclCallConfig_t fp8 = callConfig("fp8e4m3");
  if (qcclAllReduceEx(x.data(), y.data(), count, qcclFloat32, qcclSum, comm, nullptr, &fp8) !=
      qcclInvalidUsage) {
    fail(std::string("count disagreement not reported: ") + qcclGetLastError(nullptr));
  }
  qcclCallConfig_t other = callConfig(rank == 1 ? "int8" : "fp8e4m3");
  if (qcclAllReduceEx(x.data(), y.data(), x.size(), qcclFloat32, qcclSum, comm, nullptr, &other) !=
      qcclInvalidUsage) {
    fail(std::string("codec disagreement not reported: ") + qcclGetLastError(nullptr));
  }
  if (qcclAllReduceEx(x.data(), y.data(), x.size(), qcclFloat32, qcclSum, comm, nullptr, &fp8) !=
          qcclSuccess ||
      y[0] != float(nranks)) {
    fail(std::string("no recovery after the disagreement: ") + qcclGetLastError(nullptr));
  }
}

void checkErrorFeedback() {
  ++checks;
  const size_t count = 20000;
  std::vector<uint8_t> in;
  std::vector<double> mine;
  makeInput(rank, count, qcclFloat32, in, mine);
  const std::vector<std::vector<double>> inputs = allInputs(count, qcclFloat32);
  std::vector<double> exact(count, 0.0), sum(count, 0.0);
  for (const auto& x : inputs) {
    for (size_t i = 0; i < count; ++i) exact[i] += x[i];
  }
  qcclCallConfig_t config = QCCL_CALL_CONFIG_INITIALIZER;
  config.codec = "int4";
  config.efKey = 42;
  std::vector<float> out(count);
  double first = 0, last = 0;
  for (int t = 1; t <= 100; ++t) {
    if (qcclAllReduceEx(in.data(), out.data(), count, qcclFloat32, qcclSum, comm, nullptr,
                        &config) != qcclSuccess) {
      return fail(std::string("EF: ") + qcclGetLastError(nullptr));
    }
    double e2 = 0, n2 = 0;
    for (size_t i = 0; i < count; ++i) {
      sum[i] += out[i];
      e2 += (sum[i] / t - exact[i]) * (sum[i] / t - exact[i]);
      n2 += exact[i] * exact[i];
    }
    (t == 1 ? first : last) = std::sqrt(e2 / n2);
  }
  std::vector<uint8_t> bytes(out.size() * 4);
  std::memcpy(bytes.data(), out.data(), bytes.size());
  if (!identicalEverywhere(bytes)) fail("EF: outputs differ between ranks");
  if (!(last < first / 10)) {
    fail("EF: time-averaged error " + std::to_string(last) + " at T=100 is not 10x below " +
         std::to_string(first) + " at T=1");
  }
}

// Resident memory of this process, in MiB, after the allocator returned what is free (the
// checks' own large vectors come and go; what stays is what is live).
double residentMiB() {
  malloc_trim(0);
  long pages = 0, resident = 0;
  if (FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  return double(resident) * double(sysconf(_SC_PAGESIZE)) / (1 << 20);
}

// True while rank 0's clock has not passed `seconds`: every rank stops at the same iteration.
bool everyoneContinues(std::chrono::steady_clock::time_point start, double seconds) {
  int32_t go =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < seconds;
  if (qcclBroadcast(&go, &go, 1, qcclInt32, 0, comm, nullptr) != qcclSuccess) {
    fail(std::string("soak broadcast: ") + qcclGetLastError(nullptr));
    return false;
  }
  return go != 0;
}

// Random checks, the same sequence on every rank (one seed), until `seconds` have passed: every
// codec, dtype, op, placement and collective at sizes from 0 to 2^21 elements (log-uniform).
// Resident memory is taken after the first minute, at half time and at the end.
void soak(const std::vector<std::string>& codecs, double seconds) {
  std::mt19937_64 rng(20261201);
  const qcclDataType_t floats[] = {qcclFloat32, qcclBfloat16, qcclFloat16};
  const qcclRedOp_t ops[] = {qcclSum, qcclAvg, qcclMax};
  const auto start = std::chrono::steady_clock::now();
  double residentWarm = 0, residentHalf = 0;
  int iterations = 0;
  while (everyoneContinues(start, seconds)) {
    const std::string& codec = codecs[rng() % codecs.size()];
    const size_t count = size_t(std::exp2(double(rng() % 2200) / 100.0)) - 1;
    const qcclDataType_t dtype = floats[rng() % 3];
    if (rng() % 3 == 0) {
      checkReduceScatterAndAllgather(codec, count / size_t(nranks), dtype);
    } else {
      checkAllreduce(codec, count, dtype, ops[rng() % 3], rng() % 2 == 0);
    }
    if (++iterations % 200 == 0 && nranks > 1) checkErrorFeedback();
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (residentWarm == 0 && elapsed > std::min(60.0, seconds / 4)) residentWarm = residentMiB();
    if (residentHalf == 0 && elapsed > seconds / 2) residentHalf = residentMiB();
  }
  uint64_t sent = 0, received = 0;
  qcclCommWireBytes(comm, &sent, &received);
  const double residentEnd = residentMiB();
  std::printf(
      "soak rank %d of %d: %d checks, %d wrong, %.1f MB sent, resident %.1f MiB after warm-up, "
      "%.1f at half time, %.1f at the end\n",
      rank, nranks, checks, failures, double(sent) / 1e6, residentWarm, residentHalf, residentEnd);
  // Workspaces grow to the largest call seen, which may come late; a leak grows on and on.
  if (residentEnd > residentHalf * 1.05 + 8) fail("soak: resident memory grew in the second half");
}

// The fixed matrix: every codec, dtype, op, placement; exact paths; large vectors; RS/AG; EF.
// Point-to-point over the real transport: a ring in one group at two sizes (eager and
// rendezvous), then two tagged messages received in the other order; MPI's tag bound (as low as
// 2^15 under some MPIs) must not mix them up.
void checkPointToPoint() {
  const int right = (rank + 1) % nranks, left = (rank + nranks - 1) % nranks;
  for (size_t count : {size_t(100), size_t(1) << 20}) {
    ++checks;
    std::vector<float> out(count), in(count, -1.0f);
    for (size_t i = 0; i < count; ++i) out[i] = float(rank * 1000 + int(i % 1000));
    qcclGroupStart();
    qcclSend(out.data(), count, qcclFloat32, right, comm, nullptr);
    qcclRecv(in.data(), count, qcclFloat32, left, comm, nullptr);
    if (qcclGroupEnd() != qcclSuccess) {
      fail(std::string("ring in a group: ") + qcclGetLastError(nullptr));
      continue;
    }
    for (size_t i = 0; i < count; ++i) {
      if (in[i] != float(left * 1000 + int(i % 1000))) {
        fail("ring: element " + std::to_string(i) + " from rank " + std::to_string(left));
        break;
      }
    }
  }
  ++checks;
  const std::vector<int32_t> a(5000, rank), b(5000, rank + 100);
  std::vector<int32_t> gotB(5000), gotA(5000);
  qcclRequest_t sa, sb, rb, ra;
  if (qcclIsend(a.data(), a.size(), qcclInt32, right, 3, comm, &sa) != qcclSuccess ||
      qcclIsend(b.data(), b.size(), qcclInt32, right, 40000, comm, &sb) != qcclSuccess ||
      qcclIrecv(gotB.data(), gotB.size(), qcclInt32, left, 40000, comm, &rb) != qcclSuccess ||
      qcclIrecv(gotA.data(), gotA.size(), qcclInt32, left, 3, comm, &ra) != qcclSuccess ||
      qcclWait(rb) != qcclSuccess || qcclWait(ra) != qcclSuccess || qcclWait(sa) != qcclSuccess ||
      qcclWait(sb) != qcclSuccess) {
    fail(std::string("tagged messages: ") + qcclGetLastError(nullptr));
  } else if (gotA != std::vector<int32_t>(5000, left) ||
             gotB != std::vector<int32_t>(5000, left + 100)) {
    fail("tagged messages matched the wrong tag");
  }
  // Rank 0 hears from every other rank through receives from any source (tag 77).
  ++checks;
  if (rank != 0) {
    const std::vector<int32_t> mine(3000, rank * 3);
    if (qcclIsend(mine.data(), mine.size(), qcclInt32, 0, 77, comm, &sa) != qcclSuccess ||
        qcclWait(sa) != qcclSuccess) {
      fail(std::string("a send to a receive from any source: ") + qcclGetLastError(nullptr));
    }
    return;
  }
  std::vector<bool> heard(size_t(nranks), false);
  for (int k = 1; k < nranks; ++k) {
    std::vector<int32_t> got(3000, -1);
    int source = -1;
    if (qcclIrecvAnySource(got.data(), got.size(), qcclInt32, 77, comm, &source, &ra) !=
            qcclSuccess ||
        qcclWait(ra) != qcclSuccess) {
      fail(std::string("a receive from any source: ") + qcclGetLastError(nullptr));
    } else if (source < 1 || source >= nranks || heard[size_t(source)] ||
               got != std::vector<int32_t>(3000, source * 3)) {
      fail("a receive from any source named rank " + std::to_string(source) + " wrongly");
    } else {
      heard[size_t(source)] = true;
    }
  }
}

// Gather, scatter and reduce at the first and the last rank.
void checkRooted() {
  const size_t count = 100003;
  for (int root : {0, nranks - 1}) {
    ++checks;
    std::vector<int32_t> mine(count), all(count * size_t(nranks), -1), back(count, -1);
    for (size_t i = 0; i < count; ++i) mine[i] = int32_t(rank * 7 + int(i % 1009));
    if (qcclGather(mine.data(), all.data(), count, qcclInt32, root, comm, nullptr) != qcclSuccess ||
        qcclScatter(all.data(), back.data(), count, qcclInt32, root, comm, nullptr) !=
            qcclSuccess) {
      fail(std::string("gather/scatter: ") + qcclGetLastError(nullptr));
      continue;
    }
    if (back != mine) fail("scatter of the gathered blocks, root " + std::to_string(root));
    std::vector<int32_t> sum(count, -1);
    if (qcclReduce(mine.data(), sum.data(), count, qcclInt32, qcclSum, root, comm, nullptr) !=
        qcclSuccess) {
      fail(std::string("reduce: ") + qcclGetLastError(nullptr));
      continue;
    }
    for (size_t i = 0; i < count; ++i) {
      const int32_t want =
          rank == root ? int32_t(7 * nranks * (nranks - 1) / 2 + nranks * int(i % 1009)) : -1;
      if (sum[i] != want) {
        fail("reduce element " + std::to_string(i) + ", root " + std::to_string(root));
        break;
      }
    }
  }
}

void runMatrix(const std::vector<std::string>& codecs, bool quick) {
  checkPointToPoint();
  checkRooted();
  // Every codec, every float dtype, Sum and Avg, both placements, small and awkward counts.
  for (const std::string& codec : codecs) {
    for (qcclDataType_t dtype : {qcclFloat32, qcclBfloat16, qcclFloat16}) {
      for (qcclRedOp_t op : {qcclSum, qcclAvg}) {
        for (size_t count : {size_t(0), size_t(1), size_t(7)})
          checkAllreduce(codec, count, dtype, op, count == 7);
      }
    }
    checkAllreduce(codec, 1000003, qcclFloat32, qcclSum, false);
  }
  // The exact paths: integers, Max, and every dtype.
  for (qcclDataType_t dtype : {qcclInt32, qcclFloat32, qcclBfloat16, qcclFloat16}) {
    for (qcclRedOp_t op : {qcclSum, qcclAvg, qcclMax}) {
      for (bool inPlace : {false, true}) {
        checkAllreduce("none", 7, dtype, op, inPlace);
        checkAllreduce("none", 3001, dtype, op, inPlace);  // 4 ranks: halving, or two rounds
        checkAllreduce("fp8e4m3", quick ? 1031 : 1000003, dtype, op, inPlace);
      }
    }
  }
  // A multi-MiB vector (12 MiB of fp32), and reduce-scatter and allgather shares of 1.2 MB: the
  // exact calls pipelined (more than one 1 MiB segment per chunk).
  for (const char* codec : {"none", "fp8e4m3", "nvfp4"})
    checkAllreduce(codec, 3u << 20, qcclFloat32, qcclSum, true);
  checkReduceScatterAndAllgather("none", 300007, qcclFloat32);
  for (const char* codec : {"none", "fp8e4m3", "int4", "mxfp4"}) {
    for (size_t count : {size_t(1), size_t(7), size_t(100003)}) {
      checkReduceScatterAndAllgather(codec, count, qcclFloat32);
      checkReduceScatterAndAllgather(codec, count, qcclBfloat16);
    }
  }
  if (nranks > 1) {  // one rank copies its input: nothing to feed back, nobody to disagree with
    checkErrorFeedback();
    checkDisagreement();
  }
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::string(argv[1]) == "quick";
  const double soakSeconds = argc > 2 && std::string(argv[1]) == "soak" ? std::atof(argv[2]) : 0;
#if QCCL_CHECK_WITH_MPI
  underMpi = std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr;
  if (underMpi) MPI_Init(&argc, &argv);
#endif
  qcclConfig_t config = QCCL_CONFIG_INITIALIZER;
  config.minBytes = 0;  // compress every size, so small counts take the compressed path too
  if (qcclCommInitFromEnv(&comm, &config) != qcclSuccess) {
    std::printf("FAIL init: %s\n", qcclGetLastError(nullptr));
    return 1;
  }
  qcclCommUserRank(comm, &rank);
  qcclCommCount(comm, &nranks);
  const auto start = std::chrono::steady_clock::now();

  const std::vector<std::string> codecs = {"none",  "bf16",  "fp16",      "fp8e4m3",   "fp8e5m2",
                                           "mxfp8", "mxfp4", "nvfp4",     "fp4ue5m3",  "int8",
                                           "int4",  "sign1", "nvfp4+rht", "fp8e4m3+sr"};
  if (soakSeconds > 0) {
    soak(codecs, soakSeconds);
  } else {
    runMatrix(codecs, quick);
  }

  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (qcclCommFinalize(comm) != qcclSuccess)
    fail(std::string("finalize: ") + qcclGetLastError(nullptr));
  qcclCommDestroy(comm);
  std::printf("rank %d of %d: %d checks, %d failures, %.1f s\n", rank, nranks, checks, failures,
              seconds);
#if QCCL_CHECK_WITH_MPI
  if (underMpi) MPI_Finalize();
#endif
  return failures == 0 ? 0 : 1;
}
