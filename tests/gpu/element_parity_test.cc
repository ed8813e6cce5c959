// The device copies of the element conversions give the CPU's bits: every op of
// codecs/cuda/element_kernels.h on a stride through all fp32 patterns, compared with the host
// functions. Skips with a one-line reason where no GPU is present (CI never has one).
#include <gtest/gtest.h>

#include <vector>

#include "codecs/cuda/element_kernels.h"
#include "codecs/element/e8m0.h"
#include "codecs/element/hadamard.h"
#include "codecs/element/minifloat.h"
#include "codecs/element/stochastic_round.h"

namespace qccl {
namespace {

using cuda::ElementOp;

class GpuParity : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!cuda::deviceAvailable(&why)) GTEST_SKIP() << "no GPU: " << why;
  }
};

std::vector<uint32_t> floatPatterns() {
  std::vector<uint32_t> in;
  for (uint64_t u = 0; u < (uint64_t(1) << 32); u += 257) in.push_back(uint32_t(u));
  in.resize(in.size() / 64 * 64);  // whole runs for the Hadamard op
  return in;
}

template <class HostFn>
void expectSame(ElementOp op, const std::vector<uint32_t>& in, HostFn host, const char* name) {
  std::vector<uint32_t> device(in.size());
  cuda::runElementOp(op, in.data(), in.size(), device.data());
  for (size_t i = 0; i < in.size(); ++i) {
    ASSERT_EQ(device[i], host(i)) << name << " input 0x" << std::hex << in[i];
  }
}

template <class F>
void checkFormat(ElementOp encodeOp, ElementOp decodeOp, const char* name) {
  const std::vector<uint32_t> in = floatPatterns();
  expectSame(
      encodeOp, in, [&](size_t i) { return encodeRne<F>(bitsFloat(in[i])); }, name);
  std::vector<uint32_t> codes(1u << (F::kMagBits + (F::kSigned ? 1 : 0)));
  for (size_t c = 0; c < codes.size(); ++c) codes[c] = uint32_t(c);
  expectSame(
      decodeOp, codes, [&](size_t i) { return floatBits(decode<F>(codes[i])); }, name);
}

TEST_F(GpuParity, E4M3) { checkFormat<E4M3>(ElementOp::EncodeE4M3, ElementOp::DecodeE4M3, "E4M3"); }
TEST_F(GpuParity, E5M2) { checkFormat<E5M2>(ElementOp::EncodeE5M2, ElementOp::DecodeE5M2, "E5M2"); }
TEST_F(GpuParity, E2M1) { checkFormat<E2M1>(ElementOp::EncodeE2M1, ElementOp::DecodeE2M1, "E2M1"); }
TEST_F(GpuParity, UE5M3) {
  checkFormat<UE5M3>(ElementOp::EncodeUE5M3, ElementOp::DecodeUE5M3, "UE5M3");
}
TEST_F(GpuParity, Fp16) { checkFormat<Fp16>(ElementOp::EncodeFp16, ElementOp::DecodeFp16, "FP16"); }
TEST_F(GpuParity, Bf16) { checkFormat<Bf16>(ElementOp::EncodeBf16, ElementOp::DecodeBf16, "BF16"); }

TEST_F(GpuParity, StochasticRoundingMxScaleAndHadamard) {
  const std::vector<uint32_t> in = floatPatterns();
  expectSame(
      ElementOp::StochasticE4M3, in,
      [&](size_t i) {
        return floatBits(stochasticRoundTo<E4M3>(bitsFloat(in[i]), uint32_t(i) * 2654435761u));
      },
      "SR E4M3");
  std::vector<uint32_t> finite;
  for (uint32_t u : in) {
    if ((u & 0x7fffffffu) < 0x7f800000u) finite.push_back(u);
  }
  expectSame(
      ElementOp::MxScaleE4M3, finite,
      [&](size_t i) { return mxScaleCode(bitsFloat(finite[i] & 0x7fffffffu), 448.0f); },
      "MX scale");
  // Moderate finite values so the Hadamard sums stay finite.
  std::vector<uint32_t> values(1 << 16);
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = floatBits(float(int(i * 7919 % 2001) - 1000) / 37.0f);
  std::vector<float> host(values.size());
  for (size_t i = 0; i < values.size(); ++i) host[i] = bitsFloat(values[i]);
  const RhtSigns signs = rhtSigns(1234);
  for (size_t r = 0; r < host.size(); r += 64) rhtForward(host.data() + r, 64, signs);
  expectSame(
      ElementOp::RhtForward64, values, [&](size_t i) { return floatBits(host[i]); }, "RHT");
}

}  // namespace
}  // namespace qccl
