// Codec throughput against memcpy, measured in one run: encode, encode with error feedback,
// decode and decode-accumulate of 64 MiB of fp32 (Gaussian) on one thread, reported as bytes of
// fp32 input per second. After Google Benchmark's own output, a table gives each rate as a fraction
// of memcpy's.
//
//   codec_bench [--codecs=fp8e4m3,int8] [google benchmark flags]
#include <benchmark/benchmark.h>
#include <qccl/qccl_codec.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

constexpr size_t kBytes = size_t(64) << 20;
constexpr size_t kCount = kBytes / sizeof(float);

const std::vector<float>& input() {
  static const std::vector<float> x = [] {
    std::vector<float> v(kCount);
    std::mt19937 rng(1);
    std::normal_distribution<float> normal;
    for (float& f : v) f = normal(rng);
    return v;
  }();
  return x;
}

void check(qcclResult_t r) {
  if (r != qcclSuccess) {
    std::fprintf(stderr, "qccl error: %s\n", qcclGetLastError(nullptr));
    std::exit(1);
  }
}

struct Encoded {
  qcclCodec_t codec;
  std::vector<uint8_t> chunk;
};

Encoded encoded(const std::string& spec) {
  Encoded e;
  check(qcclCodecParse(spec.c_str(), &e.codec));
  size_t bytes = 0;
  check(qcclCodecEncodedSize(e.codec, kCount, qcclFloat32, &bytes));
  e.chunk.assign(bytes, 0);
  check(qcclEncode(e.codec, input().data(), kCount, qcclFloat32, e.chunk.data(), bytes, nullptr,
                   nullptr));
  return e;
}

void memcpyBench(benchmark::State& state) {
  std::vector<float> out(kCount, 1.0f);
  for (auto _ : state) {
    std::memcpy(out.data(), input().data(), kBytes);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(kBytes));
}

// With feedback, an fp32 residual is updated in place on every encode, as the compressed
// collectives encode each contribution: the encode plus the decode and update it implies.
void encodeBench(benchmark::State& state, std::string spec, bool feedback) {
  Encoded e = encoded(spec);
  std::vector<float> residual(feedback ? kCount : 0, 0.0f);
  qcclEncodeOptions_t options = QCCL_ENCODE_OPTIONS_INITIALIZER;
  options.residual = feedback ? residual.data() : nullptr;
  for (auto _ : state) {
    check(qcclEncode(e.codec, input().data(), kCount, qcclFloat32, e.chunk.data(), e.chunk.size(),
                     &options, nullptr));
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(kBytes));
  state.counters["ratio"] = double(kBytes) / double(e.chunk.size());
}

void decodeBench(benchmark::State& state, std::string spec, bool accumulate) {
  Encoded e = encoded(spec);
  std::vector<float> out(kCount, 0.0f);
  for (auto _ : state) {
    if (accumulate) {
      check(qcclDecodeAccumulate(e.codec, e.chunk.data(), e.chunk.size(), out.data(), kCount,
                                 nullptr));
    } else {
      check(qcclDecode(e.codec, e.chunk.data(), e.chunk.size(), out.data(), kCount, qcclFloat32,
                       nullptr));
    }
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(kBytes));
}

// Collects each run's rate so the summary can divide by memcpy's from the same run.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    // With --benchmark_repetitions the median stands for the benchmark, else its single run.
    for (const Run& r : runs) {
      const bool median = r.run_type == Run::RT_Aggregate && r.aggregate_name == "median";
      const bool single = r.run_type == Run::RT_Iteration && r.repetitions <= 1;
      if (r.error_occurred || !(median || single)) continue;
      const std::string& name = r.run_name.function_name;
      if (!rates_.count(name)) order_.push_back(name);
      rates_[name] = r.counters.at("bytes_per_second").value;
    }
  }

  void Finalize() override {
    ConsoleReporter::Finalize();
    const double memcpyRate = rates_.count("memcpy") ? rates_["memcpy"] : 0;
    std::printf(
        "\nfp32 input bytes/s as a fraction of memcpy (%.2f GB/s) in this run, kernels: %s\n",
        memcpyRate / 1e9, kernels_.c_str());
    std::printf("%-24s %10s %8s\n", "benchmark", "GB/s", "x memcpy");
    for (const std::string& name : order_) {
      std::printf("%-24s %10.2f %8.2f\n", name.c_str(), rates_[name] / 1e9,
                  memcpyRate > 0 ? rates_[name] / memcpyRate : 0.0);
    }
  }

 private:
  std::string kernels_ = std::getenv("QCCL_CPU_KERNELS") ? std::getenv("QCCL_CPU_KERNELS") : "auto";
  std::map<std::string, double> rates_;
  std::vector<std::string> order_;
};

std::vector<std::string> codecsFromArgs(int* argc, char** argv) {
  std::string list =
      "none,bf16,fp16,fp8e4m3,fp8e5m2,mxfp8,mxfp4,nvfp4,fp4ue5m3,int8,int4,int2,sign1,"
      "fp8e4m3+sr,mxfp4+sr,nvfp4+rht,int4+rht,topk0.01+int2,topk0.05+fp8e4m3,topk0.1+bf16";
  int kept = 1;
  for (int i = 1; i < *argc; ++i) {
    if (std::strncmp(argv[i], "--codecs=", 9) == 0) {
      list = argv[i] + 9;
    } else {
      argv[kept++] = argv[i];
    }
  }
  *argc = kept;
  std::vector<std::string> codecs;
  std::stringstream ss(list);
  for (std::string c; std::getline(ss, c, ',');) codecs.push_back(c);
  return codecs;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> codecs = codecsFromArgs(&argc, argv);
  input();  // generate the data before anything is timed
  benchmark::RegisterBenchmark("memcpy", memcpyBench)->Unit(benchmark::kMillisecond)->UseRealTime();
  for (const std::string& c : codecs) {
    benchmark::RegisterBenchmark(("encode/" + c).c_str(), encodeBench, c, false)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
    benchmark::RegisterBenchmark(("encode_ef/" + c).c_str(), encodeBench, c, true)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
    benchmark::RegisterBenchmark(("decode/" + c).c_str(), decodeBench, c, false)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
    benchmark::RegisterBenchmark(("decode_acc/" + c).c_str(), decodeBench, c, true)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
