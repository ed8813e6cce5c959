// The CUDA codec kernels on a GPU against the CPU kernels, bit for bit: chunks, error-feedback
// residuals, decoded values and decode-accumulate, for every format with +sr and +rht, fp32, bf16
// and fp16 input (CI has no GPU: these skip; the same tile bodies run on the CPU in
// tests/unit/device_tile_test.cc).
#include <gtest/gtest.h>

#include <cstring>

#include "codecs/codec.h"
#include "codecs/cuda/codec_kernels.h"
#include "codecs/element/minifloat.h"
#include "tests/gpu/gpu_test_util.h"
#include "tests/unit/codec_test_util.h"

namespace qccl::test {
namespace {

struct Case {
  std::string spec;
  qcclDataType_t dtype;
  bool ef;
};

std::string caseName(const Case& c) {
  return specTestName(c.spec) + "_" + dtypeName(c.dtype) + (c.ef ? "_ef" : "");
}

void PrintTo(const Case& c, std::ostream* os) { *os << caseName(c); }

class DeviceCodec : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override { QCCL_SKIP_WITHOUT_GPU(); }
};

std::vector<uint8_t> asBytes(const std::vector<float>& x, qcclDataType_t dtype) {
  std::vector<uint8_t> out(x.size() * (dtype == qcclFloat32 ? 4 : 2));
  for (size_t i = 0; i < x.size(); ++i) {
    if (dtype == qcclFloat32) {
      std::memcpy(&out[4 * i], &x[i], 4);
    } else {
      const uint16_t h =
          uint16_t(dtype == qcclBfloat16 ? encodeRne<Bf16>(x[i]) : encodeRne<Fp16>(x[i]));
      std::memcpy(&out[2 * i], &h, 2);
    }
  }
  return out;
}

TEST_P(DeviceCodec, CpuBitsOnTheGpu) {
  const Case& c = GetParam();
  const codec::CodecSpec spec = codec::parseCodecSpec(c.spec);
  const size_t counts[] = {1, 37, 4099, 1 << 20};
  for (size_t count : counts) {
    std::vector<float> x = studentT3(count, uint32_t(count));
    if (count > 100) x[count / 2] = NAN;
    const std::vector<uint8_t> input = asBytes(x, c.dtype);
    const std::vector<uint8_t> residual = asBytes(gaussian(count, 9), qcclFloat32);
    const size_t bytes = codec::encodedSize(spec, count, c.dtype);
    // CPU
    std::vector<uint8_t> want(bytes), wantResidual = residual;
    codec::EncodeParams p;
    p.seed = 77;
    p.rank = 2;
    p.call = 5;
    p.offset = 13;
    p.residual = c.ef ? wantResidual.data() : nullptr;
    p.residualDecay = count % 2 ? 0.6f : 1.0f;  // decayed error feedback on the odd counts
    codec::encode(spec, input.data(), count, c.dtype, want.data(), bytes, p);
    // GPU
    DeviceBytes dIn(input), dOut(bytes), dResidual(residual), amax(4), status(4);
    cudaMemset(status.data(), 0, 4);
    const cuda::CodecLaunch launch{spec, 77, 2, nullptr};
    const cuda::EncodeRequest request{
        dIn.data(), c.ef ? dResidual.data() : nullptr, dOut.data(), count, 13, 5};
    cuda::encode(launch, c.dtype, qcclFloat32, p.residualDecay, &request, 1,
                 reinterpret_cast<uint32_t*>(amax.data()));
    CUDA_OK(cudaDeviceSynchronize());
    ASSERT_EQ(dOut.get(), want) << count << " elements";
    if (c.ef) {
      ASSERT_EQ(dResidual.get(), wantResidual) << "residual, " << count << " elements";
    }
    // Decode into fp32 and add into fp32.
    for (bool accumulate : {false, true}) {
      std::vector<uint8_t> start = asBytes(gaussian(count, 3), qcclFloat32), decoded = start;
      codec::decode(spec, want.data(), bytes, decoded.data(), count, qcclFloat32, accumulate);
      DeviceBytes dDecoded(start);
      const cuda::DecodeRequest d{dOut.data(), dDecoded.data(), count, c.dtype};
      cuda::decode(launch, qcclFloat32, accumulate, &d, 1,
                   reinterpret_cast<uint32_t*>(status.data()), nullptr);
      CUDA_OK(cudaDeviceSynchronize());
      ASSERT_EQ(dDecoded.get(), decoded) << (accumulate ? "decode-accumulate" : "decode");
    }
  }
}

std::vector<Case> cases() {
  std::vector<Case> all;
  for (const char* s : {"none", "bf16", "fp16", "fp8e4m3", "fp8e5m2", "mxfp8", "mxfp4", "nvfp4",
                        "fp4ue5m3", "int8", "int4", "sign1", "fp8e4m3+sr", "nvfp4+sr+rht",
                        "int4+rht", "mxfp4+rht128", "bf16+sr", "int2"}) {
    all.push_back({s, qcclFloat32, false});
    all.push_back({s, qcclFloat32, true});
  }
  for (const char* s : {"fp8e4m3", "nvfp4", "int4+rht"}) {
    all.push_back({s, qcclBfloat16, true});
    all.push_back({s, qcclFloat16, false});
  }
  return all;
}

INSTANTIATE_TEST_SUITE_P(Codecs, DeviceCodec, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return caseName(info.param); });

}  // namespace
}  // namespace qccl::test
