// Codec spec parsing: the grammar FORMAT[+sr][+rht[R]][/bN], canonical names, and clear errors.
#include <gtest/gtest.h>

#include "codecs/codec_error.h"
#include "codecs/codec_spec.h"

namespace qccl::codec {
namespace {

TEST(CodecSpec, ParsesFormatsAndModifiers) {
  CodecSpec s = parseCodecSpec("nvfp4+rht");
  EXPECT_EQ(s.format, Format::NvFp4);
  EXPECT_FALSE(s.stochastic);
  EXPECT_EQ(s.rhtSize, 64);
  EXPECT_EQ(s.block, 16u);
  s = parseCodecSpec("MXFP4+SR");
  EXPECT_EQ(s.format, Format::MxFp4);
  EXPECT_TRUE(s.stochastic);
  s = parseCodecSpec("int4/b64");
  EXPECT_EQ(s.block, 64u);
  s = parseCodecSpec("int8+rht256+sr/b512");
  EXPECT_EQ(s.rhtSize, 256);
  EXPECT_TRUE(s.stochastic);
  EXPECT_EQ(s.block, 512u);
  EXPECT_EQ(parseCodecSpec("none").block, 0u);
  EXPECT_EQ(parseCodecSpec("sign1").block, 2048u);
}

TEST(CodecSpec, CanonicalNamesRoundTrip) {
  const std::pair<const char*, const char*> cases[] = {
      {"fp8e4m3", "fp8e4m3"},
      {"fp8e4m3/b128", "fp8e4m3"},
      {"int8+rht256+sr/b512", "int8+sr+rht256/b512"},
      {"nvfp4+rht64", "nvfp4+rht"},
      {"Bf16+SR", "bf16+sr"},
      {"sign1/b4096", "sign1/b4096"},
  };
  for (const auto& [in, canonical] : cases) {
    const CodecSpec s = parseCodecSpec(in);
    EXPECT_EQ(codecName(s), canonical) << in;
    EXPECT_EQ(parseCodecSpec(codecName(s)), s) << in;
  }
}

TEST(CodecSpec, RejectsWithAMessage) {
  const std::pair<const char*, const char*> cases[] = {
      {"", "unknown format"},
      {"fp7", "unknown format"},
      {"fp8e4m3+xx", "unexpected"},
      {"fp8e4m3+sr+sr", "unexpected"},
      {"fp8e4m3/b", "unexpected"},
      {"fp8e4m3/b100", "multiple of 16"},
      {"fp8e4m3/b8", "multiple of 16"},
      {"fp8e4m3/b16384", "multiple of 16"},
      {"fp8e4m3/b99999999999", "unexpected"},
      {"mxfp4/b64", "fixed at 32"},
      {"nvfp4/b32", "fixed at 16"},
      {"bf16/b32", "no /bN"},
      {"bf16+rht", "block-scaled"},
      {"none+sr", "+sr is not defined"},
      {"sign1+sr", "+sr is not defined"},
      {"int2+sr", "+sr is not defined"},
      {"int8+rht100", "power of two"},
      {"int8+rht512", "power of two"},
      {"int8+rht8", "power of two"},
      {"int8+rht0", "power of two"},  // not "no rotation" (a defect an outside oracle found)
      {"int8+rht00", "power of two"},
      {"int8+rhtx", "bad +rht size"},
      {"int8/b64+sr", "unexpected"},
      {"int8/b64/b64", "unexpected"},
  };
  for (const auto& [spec, fragment] : cases) {
    try {
      parseCodecSpec(spec);
      ADD_FAILURE() << "accepted '" << spec << "'";
    } catch (const CodecError& e) {
      EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument) << spec;
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos)
          << "'" << spec << "': " << e.what();
    }
  }
}

}  // namespace
}  // namespace qccl::codec
