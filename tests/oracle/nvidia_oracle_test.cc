// qccl's element conversions against NVIDIA's host-callable conversions from cuda_fp8.h,
// cuda_fp4.h, cuda_fp16.h and cuda_bf16.h, bit for bit, on millions of inputs: a stride through
// all 2^32 fp32 patterns, random values in each format's range, every tie and its neighbours,
// subnormals, overflow, NaN and infinity. Built only where the CUDA headers exist.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp4.h>
#include <cuda_fp8.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "codecs/element/e8m0.h"
#include "codecs/element/minifloat.h"

namespace qccl {
namespace {

// A stride through every fp32 bit pattern, random values around the format's range, and the
// midpoints between neighbouring codes with their fp32 neighbours.
template <class F>
std::vector<float> inputs() {
  std::vector<float> in;
  for (uint64_t u = 0; u < (uint64_t(1) << 32); u += 1021) in.push_back(bitsFloat(uint32_t(u)));
  std::mt19937_64 rng(F::kManBits * 131 + F::kExpBits);
  const int hi = int(std::log2(maxValue<F>())) + 2, lo = F::kMinExp - F::kManBits - 3;
  for (int i = 0; i < 2000000; ++i) {
    const float m = 1.0f + float(rng() % (1u << 23)) / float(1u << 23);
    in.push_back(std::ldexp(m, lo + int(rng() % uint64_t(hi - lo + 1))) * ((rng() & 1) ? -1 : 1));
  }
  for (uint32_t c = 0; c + 1 < (1u << F::kMagBits); ++c) {
    const float a = decode<F>(c), b = decode<F>(c + 1);
    if (!std::isfinite(a) || !std::isfinite(b)) break;
    const float mid = float((double(a) + double(b)) / 2);
    for (float v : {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, INFINITY)}) {
      in.push_back(v);
      in.push_back(-v);
    }
  }
  for (float v : {0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN, 3.4028235e38f, -1e-45f}) {
    in.push_back(v);
  }
  return in;
}

TEST(NvidiaOracle, E4M3Encode) {
  for (float x : inputs<E4M3>()) {
    ASSERT_EQ(encodeRne<E4M3>(x), __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3))
        << x << " 0x" << std::hex << floatBits(x);
  }
}

TEST(NvidiaOracle, E5M2Encode) {
  for (float x : inputs<E5M2>()) {
    ASSERT_EQ(encodeRne<E5M2>(x), __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E5M2))
        << x << " 0x" << std::hex << floatBits(x);
  }
}

TEST(NvidiaOracle, E2M1Encode) {
  for (float x : inputs<E2M1>()) {
    ASSERT_EQ(encodeRne<E2M1>(x), __nv_cvt_float_to_fp4(x, __NV_E2M1, cudaRoundNearest))
        << x << " 0x" << std::hex << floatBits(x);
  }
}

float halfRawToFloat(__half_raw h) { return __half2float(__half(h)); }

TEST(NvidiaOracle, EveryCodeDecodes) {
  for (uint32_t c = 0; c < 256; ++c) {
    const float e4m3 = halfRawToFloat(__nv_cvt_fp8_to_halfraw(__nv_fp8_storage_t(c), __NV_E4M3));
    const float e5m2 = halfRawToFloat(__nv_cvt_fp8_to_halfraw(__nv_fp8_storage_t(c), __NV_E5M2));
    if (std::isnan(e4m3)) {
      EXPECT_TRUE(std::isnan(decode<E4M3>(c))) << c;
    } else {
      EXPECT_EQ(floatBits(decode<E4M3>(c)), floatBits(e4m3)) << c;
    }
    if (std::isnan(e5m2)) {
      EXPECT_TRUE(std::isnan(decode<E5M2>(c))) << c;
    } else {
      EXPECT_EQ(floatBits(decode<E5M2>(c)), floatBits(e5m2)) << c;
    }
    const float e8m0 =
        __bfloat162float(__nv_bfloat16(__nv_cvt_e8m0_to_bf16raw(__nv_fp8_storage_t(c))));
    if (c == 0xFF) {
      EXPECT_TRUE(std::isnan(decodeE8M0(c)));
      EXPECT_TRUE(std::isnan(e8m0));
    } else {
      EXPECT_EQ(decodeE8M0(c), e8m0) << c;
    }
  }
  for (uint32_t c = 0; c < 16; ++c) {
    const float e2m1 = halfRawToFloat(__nv_cvt_fp4_to_halfraw(__nv_fp4_storage_t(c), __NV_E2M1));
    EXPECT_EQ(floatBits(decode<E2M1>(c)), floatBits(e2m1)) << c;
  }
}

// The MX scale: E8M0 rounding up (cudaRoundPosInf) of amax / elem_max computed in double, which
// is exact enough that its ceiling is the exact one.
TEST(NvidiaOracle, MxScaleIsE8M0RoundUpOfAmaxOverElemMax) {
  std::mt19937 rng(11);
  for (float elemMax : {448.0f, 6.0f}) {
    std::vector<float> amaxes = {0.0f, 1e-45f, 3.4028235e38f};
    for (int e = -150; e < 128; ++e) {
      const float v = std::ldexp(elemMax, e);
      for (float w : {v, std::nextafter(v, 0.0f), std::nextafter(v, INFINITY)}) {
        if (std::isfinite(w)) amaxes.push_back(w);
      }
    }
    for (int i = 0; i < 2000000; ++i) {
      const float v = bitsFloat(rng() & 0x7fffffffu);
      if (std::isfinite(v)) amaxes.push_back(v);
    }
    for (float a : amaxes) {
      const uint32_t nv =
          __nv_cvt_double_to_e8m0(double(a) / double(elemMax), __NV_SATFINITE, cudaRoundPosInf);
      ASSERT_EQ(mxScaleCode(a, elemMax), nv) << a << " / " << elemMax;
    }
  }
}

// fp16 and bf16 follow IEEE round-to-nearest-even; qccl additionally saturates finite values that
// would round to infinity (docs/CODECS.md), where NVIDIA's conversions return infinity.
template <class F, class Convert>
void checkSixteenBit(Convert nvidia, uint32_t maxCode) {
  for (float x : inputs<F>()) {
    const uint32_t nv = nvidia(x);
    const uint32_t ours = encodeRne<F>(x);
    if (std::isfinite(x) && (nv & 0x7fffu) == F::kInfCode) {
      ASSERT_EQ(ours, maxCode | (floatBits(x) >> 31 << 15)) << x;
    } else {
      ASSERT_EQ(ours, nv) << x << " 0x" << std::hex << floatBits(x);
    }
  }
}

TEST(NvidiaOracle, Fp16Encode) {
  checkSixteenBit<Fp16>([](float x) { return uint32_t(__half_raw(__float2half_rn(x)).x); },
                        Fp16::kMaxCode);
}

TEST(NvidiaOracle, Bf16Encode) {
  checkSixteenBit<Bf16>(
      [](float x) { return uint32_t(__nv_bfloat16_raw(__float2bfloat16_rn(x)).x); },
      Bf16::kMaxCode);
}

}  // namespace
}  // namespace qccl
