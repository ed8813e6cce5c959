// qccl-perf: nccl-tests-style bandwidth measurement of plain and compressed collectives, with the
// uncompressed baseline timed in the same run. Launch with qcclrun or mpirun (docs/PERFORMANCE.md).
//
//   qccl-perf [-b 1M] [-e 128M] [-f 2] [-i 1M] [-n 20] [-w 5] [-c 1] [-o sum] [-d float]
//             [-C codec,...|all] [-T transport] [-a allreduce|reducescatter|allgather]
//             [-B 1|0] [-J file.json] [--csv file.csv] [--model]
//
// Columns: nccl-tests' size, count, type, redop, time (us), algbw and busbw (GB/s), #wrong; then
// codec, wire bytes per rank, compression ratio, relative L2 error, max error, and the baseline
// (MPI_Allreduce / MPI_Reduce_scatter_block / MPI_Allgather under mpirun, else qccl's exact path)
// with its time, busbw and the speedup; with --model, the cost model's prediction for the row
// (qcclCommPredict) and measured / predicted. Exits non-zero when any #wrong is not 0.
#include <qccl/qccl.h>
#include <qccl/qccl_codec.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#if QCCL_PERF_WITH_MPI
#include <mpi.h>
#endif

namespace {

enum class Collective { AllReduce, ReduceScatter, AllGather };

struct Options {
  size_t minBytes = 32 << 20, maxBytes = 32 << 20, stepBytes = 1 << 20;
  double stepFactor = 0;  // nccl-tests: -f multiplies, else -i adds
  int iterations = 20, warmup = 5;
  bool check = true;
  qcclRedOp_t op = qcclSum;
  qcclDataType_t dtype = qcclFloat32;
  std::vector<std::string> codecs = {"none", "fp8e4m3", "int8", "mxfp4", "nvfp4", "int4"};
  std::string transport;
  Collective collective = Collective::AllReduce;
  bool baseline = true;
  bool model = false;  // the cost model's prediction beside each measurement
  std::string jsonPath, csvPath;
};

int rank = 0, nranks = 1;
bool underMpi = false;

[[noreturn]] void usage(const std::string& message) {
  if (rank == 0) {
    std::fprintf(
        stderr,
        "qccl-perf: %s\nusage: qccl-perf [-b min] [-e max] [-f factor] [-i step] [-n iters] "
        "[-w warmup] [-c 0|1] [-o sum|prod|min|max|avg] [-d float|half|bfloat16|double|int32|"
        "int8|uint8] [-C codec,...|all] [-T transport] [-a allreduce|reducescatter|allgather] "
        "[-B 0|1] [-J file.json] [--csv file.csv] [--model]\n",
        message.c_str());
  }
  std::exit(2);
}

size_t parseSize(const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  const std::string unit = end;
  const double scale = unit.empty()                 ? 1
                       : unit == "K" || unit == "k" ? 1024.0
                       : unit == "M" || unit == "m" ? 1048576.0
                       : unit == "G" || unit == "g" ? 1073741824.0
                                                    : -1;
  if (end == text.c_str() || scale < 0 || v < 0) usage("bad size '" + text + "'");
  return size_t(v * scale);
}

qcclDataType_t parseType(const std::string& t) {
  if (t == "float" || t == "float32") return qcclFloat32;
  if (t == "half" || t == "float16") return qcclFloat16;
  if (t == "bfloat16") return qcclBfloat16;
  if (t == "double") return qcclFloat64;
  if (t == "int32" || t == "int") return qcclInt32;
  if (t == "int8") return qcclInt8;
  if (t == "uint8") return qcclUint8;
  usage("unknown type '" + t + "'");
}

const char* typeName(qcclDataType_t t) {
  switch (t) {
    case qcclFloat32: return "float";
    case qcclFloat16: return "half";
    case qcclBfloat16: return "bfloat16";
    case qcclFloat64: return "double";
    case qcclInt32: return "int32";
    case qcclInt8: return "int8";
    default: return "uint8";
  }
}

size_t typeSize(qcclDataType_t t) {
  return t == qcclFloat64                     ? 8
         : t == qcclFloat32 || t == qcclInt32 ? 4
         : t == qcclInt8 || t == qcclUint8    ? 1
                                              : 2;
}

qcclRedOp_t parseOp(const std::string& o) {
  if (o == "sum") return qcclSum;
  if (o == "prod") return qcclProd;
  if (o == "max") return qcclMax;
  if (o == "min") return qcclMin;
  if (o == "avg") return qcclAvg;
  usage("unknown op '" + o + "'");
}

const char* opName(qcclRedOp_t o) {
  static const char* names[] = {"sum", "prod", "max", "min", "avg"};
  return names[int(o)];
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(a + " needs a value");
      return argv[++i];
    };
    if (a == "-b")
      o.minBytes = parseSize(value());
    else if (a == "-e")
      o.maxBytes = parseSize(value());
    else if (a == "-f")
      o.stepFactor = std::atof(value().c_str());
    else if (a == "-i")
      o.stepBytes = parseSize(value());
    else if (a == "-n")
      o.iterations = std::atoi(value().c_str());
    else if (a == "-w")
      o.warmup = std::atoi(value().c_str());
    else if (a == "-c")
      o.check = std::atoi(value().c_str()) != 0;
    else if (a == "-o")
      o.op = parseOp(value());
    else if (a == "-d")
      o.dtype = parseType(value());
    else if (a == "-T")
      o.transport = value();
    else if (a == "-J")
      o.jsonPath = value();
    else if (a == "--csv")
      o.csvPath = value();
    else if (a == "--model")
      o.model = true;
    else if (a == "-B") {
      o.baseline = std::atoi(value().c_str()) != 0;
    } else if (a == "-a") {
      const std::string c = value();
      o.collective = c == "allreduce"       ? Collective::AllReduce
                     : c == "reducescatter" ? Collective::ReduceScatter
                     : c == "allgather"
                         ? Collective::AllGather
                         : (usage("unknown collective '" + c + "'"), Collective::AllReduce);
    } else if (a == "-C") {
      const std::string list = value();
      o.codecs.clear();
      if (list == "all") {
        o.codecs = {"none",  "bf16",     "fp16", "fp8e4m3", "fp8e5m2", "mxfp8", "mxfp4",
                    "nvfp4", "fp4ue5m3", "int8", "int4",    "int2",    "sign1", "topk0.01+int2"};
      } else {
        size_t start = 0;
        while (start <= list.size()) {
          const size_t end = list.find(',', start);
          o.codecs.push_back(list.substr(start, end == std::string::npos ? end : end - start));
          if (end == std::string::npos) break;
          start = end + 1;
        }
      }
    } else {
      usage("unknown option '" + a + "'");
    }
  }
  if (o.iterations < 1 || o.warmup < 0 || o.maxBytes < o.minBytes)
    usage("bad iteration or size range");
  // Without MPI the baseline is the exact path, timed first so every row can refer to it.
  o.codecs.erase(std::remove(o.codecs.begin(), o.codecs.end(), "none"), o.codecs.end());
  o.codecs.insert(o.codecs.begin(), "none");
  return o;
}

void check(qcclResult_t rc, const char* what) {
  if (rc != qcclSuccess) {
    std::fprintf(stderr, "qccl-perf rank %d: %s: %s\n", rank, what, qcclGetLastError(nullptr));
    std::exit(1);
  }
}

// Rank r's input element i: the same function every rank can evaluate for any rank.
double inputValue(int r, size_t i) {
  return std::sin(0.0013 * double(i + 1) * (r + 1) + r) * (1.0 + 0.25 * r);
}

void fill(std::vector<uint8_t>& buffer, qcclDataType_t dtype, int r, size_t offset, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    const double v = inputValue(r, offset + i);
    uint8_t* p = buffer.data() + i * typeSize(dtype);
    switch (dtype) {
      case qcclFloat32: {
        const float f = float(v);
        std::memcpy(p, &f, 4);
        break;
      }
      case qcclFloat64: std::memcpy(p, &v, 8); break;
      case qcclInt32: {
        const int32_t q = int32_t(std::lround(v * 100));
        std::memcpy(p, &q, 4);
        break;
      }
      case qcclInt8: {
        const int8_t q = int8_t(std::lround(v * 10));
        std::memcpy(p, &q, 1);
        break;
      }
      case qcclUint8: {
        const uint8_t q = uint8_t(std::lround(v * 10 + 30));
        std::memcpy(p, &q, 1);
        break;
      }
      default: {  // fp16/bf16: round through fp32 by truncation is enough for test data
        const float f = float(v);
        uint32_t u;
        std::memcpy(&u, &f, 4);
        uint16_t h;
        if (dtype == qcclBfloat16) {
          h = uint16_t(u >> 16);
        } else {  // |v| < 4: a normal fp16
          const int e = int((u >> 23) & 0xFF) - 127 + 15;
          h = uint16_t(((u >> 16) & 0x8000) |
                       (e > 0 ? (uint32_t(e) << 10) | ((u >> 13) & 0x3FF) : 0));
        }
        std::memcpy(p, &h, 2);
      }
    }
  }
}

double readAsDouble(const uint8_t* p, qcclDataType_t dtype) {
  switch (dtype) {
    case qcclFloat32: {
      float f;
      std::memcpy(&f, p, 4);
      return f;
    }
    case qcclFloat64: {
      double d;
      std::memcpy(&d, p, 8);
      return d;
    }
    case qcclInt32: {
      int32_t q;
      std::memcpy(&q, p, 4);
      return q;
    }
    case qcclInt8: return double(int8_t(*p));
    case qcclUint8: return double(*p);
    case qcclBfloat16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      const uint32_t u = uint32_t(h) << 16;
      float f;
      std::memcpy(&f, &u, 4);
      return f;
    }
    default: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      const int e = (h >> 10) & 0x1F, m = h & 0x3FF;
      const double v = e == 0    ? std::ldexp(m, -24)
                       : e == 31 ? (m ? NAN : INFINITY)
                                 : std::ldexp(1024 + m, e - 25);
      return (h & 0x8000) ? -v : v;
    }
  }
}

struct Sizes {
  size_t count;      // elements of the size column's buffer
  size_t sendCount;  // elements each rank sends
  size_t recvCount;  // elements each rank receives
  double busFactor;
};

Sizes sizesFor(const Options& o, size_t bytes) {
  const size_t n = size_t(nranks), width = typeSize(o.dtype);
  const size_t count = bytes / width / n * n;  // whole shares
  switch (o.collective) {
    case Collective::AllReduce: return {count, count, count, 2.0 * (nranks - 1) / nranks};
    case Collective::ReduceScatter: return {count, count, count / n, double(nranks - 1) / nranks};
    case Collective::AllGather: return {count, count / n, count, double(nranks - 1) / nranks};
  }
  return {};
}

// The exact result this rank must hold (every rank evaluates every rank's input).
std::vector<double> reference(const Options& o, const Sizes& s) {
  std::vector<double> ref(s.recvCount);
  const size_t offset = o.collective == Collective::ReduceScatter ? size_t(rank) * s.recvCount : 0;
  std::vector<uint8_t> one(typeSize(o.dtype));
  for (size_t i = 0; i < s.recvCount; ++i) {
    if (o.collective == Collective::AllGather) {
      const int owner = int(i / s.sendCount);
      fill(one, o.dtype, owner, i % s.sendCount, 1);
      ref[i] = readAsDouble(one.data(), o.dtype);
      continue;
    }
    double acc = 0;
    for (int r = 0; r < nranks; ++r) {
      fill(one, o.dtype, r, offset + i, 1);
      const double v = readAsDouble(one.data(), o.dtype);
      acc = r == 0             ? v
            : o.op == qcclProd ? acc * v
            : o.op == qcclMax  ? std::max(acc, v)
            : o.op == qcclMin  ? std::min(acc, v)
                               : acc + v;
    }
    ref[i] = o.op == qcclAvg ? (o.dtype == qcclInt32 || o.dtype == qcclInt8 || o.dtype == qcclUint8
                                    ? std::trunc(acc / nranks)
                                    : acc / nranks)
                             : acc;
  }
  return ref;
}

uint64_t hashRange(const uint8_t* p, size_t bytes) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

struct Row {
  size_t bytes, count;
  std::string codec;
  double time, algbw, busbw;
  long long wrong;
  double wire, ratio, relError, maxError;
  double baseTime, baseBusbw, speedup;
  std::string baseName;
  double model = 0;         // predicted seconds (--model), 0: not asked
  size_t autoMinBytes = 0;  // the model's QCCL_MIN_BYTES=auto threshold for this codec
};

qcclResult_t runQccl(const Options& o, const Sizes& s, qcclComm_t comm, const void* send,
                     void* recv, const qcclCallConfig_t* call) {
  switch (o.collective) {
    case Collective::AllReduce:
      return qcclAllReduceEx(send, recv, s.count, o.dtype, o.op, comm, nullptr, call);
    case Collective::ReduceScatter:
      return qcclReduceScatterEx(send, recv, s.recvCount, o.dtype, o.op, comm, nullptr, call);
    case Collective::AllGather:
      return qcclAllGatherEx(send, recv, s.sendCount, o.dtype, comm, nullptr, call);
  }
  return qcclInvalidArgument;
}

// The largest value over the ranks (the slowest rank's time, the most wrong elements).
double maxOverRanks(qcclComm_t comm, double mine) {
  double all = 0;
  qcclCallConfig_t exact = QCCL_CALL_CONFIG_INITIALIZER;
  exact.flags = QCCL_CALL_EXACT;
  check(qcclAllReduceEx(&mine, &all, 1, qcclFloat64, qcclMax, comm, nullptr, &exact),
        "time reduction");
  return all;
}

template <class Call>
double timeCalls(qcclComm_t comm, const Options& o, Call&& call) {
  for (int i = 0; i < o.warmup; ++i) call();
  check(qcclBarrier(comm, nullptr), "barrier");
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < o.iterations; ++i) call();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return maxOverRanks(comm, seconds / o.iterations);
}

#if QCCL_PERF_WITH_MPI
bool mpiBaselineFor(const Options& o, MPI_Datatype* type, MPI_Op* op) {
  switch (o.dtype) {
    case qcclFloat32: *type = MPI_FLOAT; break;
    case qcclFloat64: *type = MPI_DOUBLE; break;
    case qcclInt32: *type = MPI_INT; break;
    case qcclInt8: *type = MPI_INT8_T; break;
    case qcclUint8: *type = MPI_UINT8_T; break;
    default: return false;
  }
  switch (o.op) {
    case qcclSum: *op = MPI_SUM; break;
    case qcclProd: *op = MPI_PROD; break;
    case qcclMax: *op = MPI_MAX; break;
    case qcclMin: *op = MPI_MIN; break;
    default: return false;  // MPI has no average
  }
  return true;
}
#endif

}  // namespace

// The smallest size from which `faster(row)` holds at every larger size of the sweep, 0 if none.
template <class Faster>
size_t crossover(const std::vector<Row>& rows, const std::string& codec, Faster faster) {
  size_t from = 0;
  for (auto it = rows.rbegin(); it != rows.rend(); ++it) {
    if (it->codec != codec) continue;
    if (!faster(*it)) break;
    from = it->bytes;
  }
  return from;
}

// Per codec, where compression starts to pay: against the baseline, and against qccl's own exact
// path (the "none" rows), which is what QCCL_MIN_BYTES decides between.
void printCrossovers(const Options& o, const std::vector<Row>& rows) {
  std::map<size_t, double> exactTime;
  for (const Row& r : rows) {
    if (r.codec == "none") exactTime[r.bytes] = r.time;
  }
  auto text = [](size_t bytes) {
    return bytes ? std::to_string(bytes) + " bytes" : std::string("never (in this sweep)");
  };
  std::printf("# crossover: smallest size from which the codec is faster at every larger size\n");
  std::printf("#   %-10s %-24s %-24s %s\n", "codec", "than the baseline", "than qccl exact",
              o.model ? "QCCL_MIN_BYTES=auto" : "");
  for (const std::string& codec : o.codecs) {
    if (codec == "none") continue;
    const size_t base = crossover(rows, codec, [](const Row& r) { return r.speedup >= 1.0; });
    const size_t exact =
        crossover(rows, codec, [&](const Row& r) { return r.time <= exactTime[r.bytes]; });
    std::string automatic;
    for (const Row& r : rows) {
      if (r.model > 0 && r.codec == codec) {
        automatic =
            r.autoMinBytes == SIZE_MAX ? "never" : std::to_string(r.autoMinBytes) + " bytes";
      }
    }
    std::printf("#   %-10s %-24s %-24s %s\n", codec.c_str(), text(base).c_str(),
                text(exact).c_str(), automatic.c_str());
  }
}

FILE* openOutput(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) {
    std::fprintf(stderr, "qccl-perf: cannot write %s: %s\n", path.c_str(), std::strerror(errno));
    std::exit(1);
  }
  return f;
}

int main(int argc, char** argv) {
#if QCCL_PERF_WITH_MPI
  underMpi = std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMI_SIZE") != nullptr;
  if (underMpi) MPI_Init(&argc, &argv);
#endif
  const Options o = parse(argc, argv);
  qcclConfig_t config = QCCL_CONFIG_INITIALIZER;
  config.minBytes = 0;  // -C none is the exact path; everything else compressed at every size
  if (!o.transport.empty()) config.transport = o.transport.c_str();
  qcclComm_t comm;
  check(qcclCommInitFromEnv(&comm, &config), "qcclCommInitFromEnv");
  check(qcclCommUserRank(comm, &rank), "rank");
  check(qcclCommCount(comm, &nranks), "count");
  const bool mpiBaseline = o.baseline && underMpi;
  const char* collectiveName = o.collective == Collective::AllReduce       ? "allreduce"
                               : o.collective == Collective::ReduceScatter ? "reducescatter"
                                                                           : "allgather";
  if (rank == 0) {
    std::printf("# qccl-perf %s: %d ranks, %s, op %s, iters %d, warmup %d, baseline %s\n",
                collectiveName, nranks, typeName(o.dtype), opName(o.op), o.iterations, o.warmup,
                !o.baseline   ? "off"
                : mpiBaseline ? "MPI"
                              : "qccl exact");
    std::printf("# %10s %12s %8s %6s %10s %10s %8s %8s %7s %13s %7s %9s %9s %10s %8s %8s%s\n",
                "size", "count", "type", "redop", "codec", "time(us)", "algbw", "busbw", "#wrong",
                "wire(B/rank)", "ratio", "relerr", "maxerr", "base(us)", "basebw", "speedup",
                o.model ? "  model(us) meas/model" : "");
    std::fflush(stdout);
  }
  std::vector<Row> rows;
  long long totalWrong = 0;
  for (size_t bytes = o.minBytes; bytes <= o.maxBytes;
       bytes = o.stepFactor > 1 ? size_t(double(bytes) * o.stepFactor) : bytes + o.stepBytes) {
    const Sizes s = sizesFor(o, bytes);
    const size_t width = typeSize(o.dtype);
    std::vector<uint8_t> send(s.sendCount * width), recv(s.recvCount * width);
    fill(send, o.dtype, rank, 0, s.sendCount);
    const std::vector<double> ref = o.check ? reference(o, s) : std::vector<double>();

    // The baseline, once per size.
    double baseTime = 0;
    std::string baseName = "-";
#if QCCL_PERF_WITH_MPI
    MPI_Datatype mpiType = MPI_FLOAT;
    MPI_Op mpiOp = MPI_SUM;
    const bool gather = o.collective == Collective::AllGather;  // moves bytes: any dtype
    if (mpiBaseline && (gather || mpiBaselineFor(o, &mpiType, &mpiOp))) {
      baseTime = timeCalls(comm, o, [&] {
        if (o.collective == Collective::AllReduce) {
          MPI_Allreduce(send.data(), recv.data(), int(s.count), mpiType, mpiOp, MPI_COMM_WORLD);
        } else if (o.collective == Collective::ReduceScatter) {
          MPI_Reduce_scatter_block(send.data(), recv.data(), int(s.recvCount), mpiType, mpiOp,
                                   MPI_COMM_WORLD);
        } else {
          MPI_Allgather(send.data(), int(s.sendCount * width), MPI_BYTE, recv.data(),
                        int(s.sendCount * width), MPI_BYTE, MPI_COMM_WORLD);
        }
      });
      baseName = "mpi";
    }
#endif
    for (const std::string& codec : o.codecs) {
      qcclCallConfig_t call = QCCL_CALL_CONFIG_INITIALIZER;
      call.codec = codec.c_str();
      call.efKey = 0x7066000000000000ull + bytes;  // the timed calls feed back like training does
      uint64_t sentBefore = 0, sentAfter = 0;
      check(qcclCommWireBytes(comm, &sentBefore, nullptr), "wire bytes");
      check(runQccl(o, s, comm, send.data(), recv.data(), &call), codec.c_str());
      check(qcclCommWireBytes(comm, &sentAfter, nullptr), "wire bytes");
      const double wire = double(sentAfter - sentBefore);
      qcclPrediction_t predicted{};
      // The model compares compressed with exact: only for dtypes that compress, with peers.
      const bool modelled =
          o.model && nranks > 1 &&
          (o.dtype == qcclFloat32 || o.dtype == qcclBfloat16 || o.dtype == qcclFloat16);
      if (modelled) {
        // The exact prediction comes with any codec's; bf16 stands in for "none".
        const size_t count = o.collective == Collective::AllReduce       ? s.count
                             : o.collective == Collective::ReduceScatter ? s.recvCount
                                                                         : s.sendCount;
        check(qcclCommPredict(comm, collectiveName, count, o.dtype,
                              codec == "none" ? "bf16" : codec.c_str(), &predicted),
              "qcclCommPredict");
      }
      const double time = timeCalls(comm, o, [&] {
        check(runQccl(o, s, comm, send.data(), recv.data(), &call), codec.c_str());
      });
      if (codec == "none" && baseName == "-" && o.baseline) {
        baseTime = time;
        baseName = "exact";
      }
      Row row{bytes, s.count, codec, time, 0, 0, 0, wire, 0, 0, 0, baseTime, 0, 0, baseName};
      if (modelled) {
        row.model = codec == "none" ? predicted.exactSeconds : predicted.compressedSeconds;
        row.autoMinBytes = predicted.autoMinBytes;
      }
      row.algbw = double(s.count * width) / time / 1e9;
      row.busbw = row.algbw * sizesFor(o, bytes).busFactor;
      row.ratio = wire > 0 ? double(s.count * width) * sizesFor(o, bytes).busFactor / wire : 0;
      if (baseTime > 0) {
        row.baseBusbw = double(s.count * width) / baseTime / 1e9 * sizesFor(o, bytes).busFactor;
        row.speedup = baseTime / time;
      }
      if (o.check) {
        // A fresh key: the checked call has the first call's numerics (no residual yet).
        qcclCallConfig_t fresh = call;
        fresh.efKey = 0x7065000000000000ull + bytes;
        check(qcclEfReset(comm, fresh.efKey), "reset");
        check(runQccl(o, s, comm, send.data(), recv.data(), &fresh), codec.c_str());
        long long wrong = 0;
        double e2 = 0, n2 = 0, maxError = 0;
        for (size_t i = 0; i < s.recvCount; ++i) {
          const double got = readAsDouble(recv.data() + i * width, o.dtype);
          const double err = std::fabs(got - ref[i]);
          if (!std::isfinite(got)) ++wrong;
          if (codec == "none") {
            const double tolerance =
                (o.dtype == qcclFloat32                                                ? 1e-6
                 : o.dtype == qcclFloat64                                              ? 1e-12
                 : o.dtype == qcclInt32 || o.dtype == qcclInt8 || o.dtype == qcclUint8 ? 0.0
                                                                                       : 1e-2) *
                (std::fabs(ref[i]) + nranks);
            if (err > tolerance) ++wrong;
          }
          e2 += err * err;
          n2 += ref[i] * ref[i];
          maxError = std::max(maxError, err);
        }
        // Outputs that every rank holds must be the same bits everywhere.
        if (o.collective != Collective::ReduceScatter) {
          const uint64_t mine = hashRange(recv.data(), recv.size());
          std::vector<uint64_t> all(static_cast<size_t>(nranks));
          check(qcclAllGather(&mine, all.data(), 1, qcclUint64, comm, nullptr), "hash");
          for (uint64_t h : all) {
            if (h != mine) {
              wrong += (long long)s.recvCount;
              break;
            }
          }
        }
        row.wrong = (long long)maxOverRanks(comm, double(wrong));
        row.relError = std::sqrt(e2 / std::max(n2, 1e-300));
        row.maxError = maxError;
      }
      totalWrong += row.wrong;
      if (rank == 0) {
        std::printf(
            "  %10zu %12zu %8s %6s %10s %10.1f %8.3f %8.3f %7lld %13.0f %7.2f %9.2e %9.2e %10.1f "
            "%8.3f %8.2f",
            row.bytes, row.count, typeName(o.dtype),
            o.collective == Collective::AllGather ? "none" : opName(o.op), codec.c_str(),
            row.time * 1e6, row.algbw, row.busbw, row.wrong, row.wire, row.ratio, row.relError,
            row.maxError, row.baseTime * 1e6, row.baseBusbw, row.speedup);
        if (row.model > 0) {
          std::printf("  %9.1f %11.2f", row.model * 1e6, row.time / row.model);
        } else if (o.model) {
          std::printf("  %9s %11s", "-", "-");
        }
        std::printf("\n");
        std::fflush(stdout);
      }
      rows.push_back(row);
    }
    if (o.stepFactor <= 1 && o.stepBytes == 0) break;
  }
  if (rank == 0) {
    printCrossovers(o, rows);
    std::printf("# total #wrong: %lld\n", totalWrong);
    if (!o.csvPath.empty()) {
      FILE* f = openOutput(o.csvPath);
      {
        std::fprintf(
            f,
            "collective,ranks,size,count,type,redop,codec,time_us,algbw,busbw,wrong,wire_"
            "bytes,ratio,relerr,maxerr,baseline,base_time_us,base_busbw,speedup,model_us\n");
        for (const Row& r : rows) {
          std::fprintf(
              f,
              "%s,%d,%zu,%zu,%s,%s,%s,%.3f,%.6f,%.6f,%lld,%.0f,%.4f,%.6e,%.6e,%s,%.3f,%.6f,%.4f,"
              "%.3f\n",
              collectiveName, nranks, r.bytes, r.count, typeName(o.dtype), opName(o.op),
              r.codec.c_str(), r.time * 1e6, r.algbw, r.busbw, r.wrong, r.wire, r.ratio, r.relError,
              r.maxError, r.baseName.c_str(), r.baseTime * 1e6, r.baseBusbw, r.speedup,
              r.model * 1e6);
        }
        std::fclose(f);
      }
    }
    if (!o.jsonPath.empty()) {
      FILE* f = openOutput(o.jsonPath);
      {
        std::fprintf(f,
                     "{\"collective\": \"%s\", \"ranks\": %d, \"type\": \"%s\", \"redop\": \"%s\", "
                     "\"rows\": [\n",
                     collectiveName, nranks, typeName(o.dtype), opName(o.op));
        for (size_t k = 0; k < rows.size(); ++k) {
          const Row& r = rows[k];
          std::fprintf(f,
                       "  {\"size\": %zu, \"count\": %zu, \"codec\": \"%s\", \"time_us\": %.3f, "
                       "\"algbw\": %.6f, "
                       "\"busbw\": %.6f, \"wrong\": %lld, \"wire_bytes\": %.0f, \"ratio\": %.4f, "
                       "\"relerr\": %.6e, "
                       "\"maxerr\": %.6e, \"baseline\": \"%s\", \"base_time_us\": %.3f, "
                       "\"base_busbw\": %.6f, "
                       "\"speedup\": %.4f, \"model_us\": %.3f}%s\n",
                       r.bytes, r.count, r.codec.c_str(), r.time * 1e6, r.algbw, r.busbw, r.wrong,
                       r.wire, r.ratio, r.relError, r.maxError, r.baseName.c_str(),
                       r.baseTime * 1e6, r.baseBusbw, r.speedup, r.model * 1e6,
                       k + 1 < rows.size() ? "," : "");
        }
        std::fprintf(f, "]}\n");
        std::fclose(f);
      }
    }
  }
  check(qcclCommFinalize(comm), "finalize");
  qcclCommDestroy(comm);
#if QCCL_PERF_WITH_MPI
  if (underMpi) MPI_Finalize();
#endif
  return totalWrong == 0 ? 0 : 1;
}
