// Round-trip error of every codec on three kinds of data, as relative L2 error |x - D(Q(x))| / |x|
// and compression ratio (fp32 bytes / chunk bytes), 2^20 elements each:
//   gauss     standard normal
//   t3        Student-t with 3 degrees of freedom (heavy tails)
//   outliers  normal with one +-10 sigma value in every 64 elements
// docs/CODECS.md quotes this table.
//
//   codec_error [codec ...]
#include <qccl/qccl_codec.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace {

constexpr size_t kCount = size_t(1) << 20;

std::vector<float> makeData(const std::string& kind) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal;
  std::chi_squared_distribution<float> chi2(3.0f);
  std::vector<float> x(kCount);
  for (float& v : x) v = kind == "t3" ? normal(rng) / std::sqrt(chi2(rng) / 3.0f) : normal(rng);
  if (kind == "outliers") {
    for (size_t i = 0; i + 64 <= kCount; i += 64) x[i + rng() % 64] = (rng() & 1) ? 10.0f : -10.0f;
  }
  return x;
}

void check(qcclResult_t r) {
  if (r != qcclSuccess) {
    std::fprintf(stderr, "qccl error: %s\n", qcclGetLastError(nullptr));
    std::exit(1);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> codecs;
  for (int i = 1; i < argc; ++i) codecs.push_back(argv[i]);
  if (codecs.empty()) {
    codecs = {"bf16",          "fp16",          "fp8e4m3",          "fp8e5m2",     "mxfp8",
              "mxfp4",         "nvfp4",         "fp4ue5m3",         "int8",        "int4",
              "sign1",         "fp8e4m3+rht",   "mxfp8+rht",        "mxfp4+rht",   "nvfp4+rht",
              "fp4ue5m3+rht",  "int8+rht",      "int4+rht",         "int2",        "int2+rht",
              "topk0.01+int2", "topk0.01+int4", "topk0.05+fp8e4m3", "topk0.1+bf16"};
  }
  const char* kinds[] = {"gauss", "t3", "outliers"};
  std::vector<std::vector<float>> data;
  for (const char* k : kinds) data.push_back(makeData(k));
  std::printf("%-17s %6s %10s %10s %10s\n", "codec", "ratio", "gauss", "t3", "outliers");
  std::vector<float> y(kCount);
  for (const std::string& spec : codecs) {
    qcclCodec_t codec;
    check(qcclCodecParse(spec.c_str(), &codec));
    size_t bytes = 0;
    check(qcclCodecEncodedSize(codec, kCount, qcclFloat32, &bytes));
    std::vector<uint8_t> chunk(bytes);
    std::printf("%-17s %6.2f", spec.c_str(), 4.0 * kCount / double(bytes));
    for (const std::vector<float>& x : data) {
      check(
          qcclEncode(codec, x.data(), kCount, qcclFloat32, chunk.data(), bytes, nullptr, nullptr));
      check(qcclDecode(codec, chunk.data(), bytes, y.data(), kCount, qcclFloat32, nullptr));
      double err = 0, norm = 0;
      for (size_t i = 0; i < kCount; ++i) {
        err += (double(x[i]) - y[i]) * (double(x[i]) - y[i]);
        norm += double(x[i]) * x[i];
      }
      std::printf(" %10.5f", std::sqrt(err / norm));
    }
    std::printf("\n");
  }
  return 0;
}
