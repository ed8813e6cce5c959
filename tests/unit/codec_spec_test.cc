// Codec spec parsing: the grammars FORMAT[+sr][+rht[R]][/bN] and topkD+FORMAT[/bN], canonical
// names, and clear errors.
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
  s = parseCodecSpec("topk0.01+int2");
  EXPECT_EQ(s.format, Format::TopK);
  EXPECT_EQ(s.valueFormat, Format::Int2);
  EXPECT_EQ(s.densityPpm, 10000u);
  EXPECT_EQ(s.block, 4096u);
  EXPECT_EQ(topkValueSpec(s), parseCodecSpec("int2"));
  EXPECT_EQ(parseCodecSpec("topk0.25+mxfp4/b1024").block, 1024u);
}

TEST(CodecSpec, CanonicalNamesRoundTrip) {
  const std::pair<const char*, const char*> cases[] = {
      {"fp8e4m3", "fp8e4m3"},
      {"fp8e4m3/b128", "fp8e4m3"},
      {"int8+rht256+sr/b512", "int8+sr+rht256/b512"},
      {"nvfp4+rht64", "nvfp4+rht"},
      {"Bf16+SR", "bf16+sr"},
      {"sign1/b4096", "sign1/b4096"},
      {"TOPK0.010+INT2", "topk0.01+int2"},
      {"topk.05+fp8e4m3/b4096", "topk0.05+fp8e4m3"},
      {"topk1.0+bf16/b16", "topk1+bf16/b16"},
      {"topk0.000001+nvfp4/b8192", "topk0.000001+nvfp4/b8192"},
      {"topk0.123456+sign1", "topk0.123456+sign1"},
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
      {"topk", "needs a value format"},
      {"topk0.01", "needs a value format"},
      {"topk0+int2", "in (0, 1]"},
      {"topk1.5+int2", "in (0, 1]"},
      {"topk0.0000001+int2", "six decimals"},
      {"topk+int2", "six decimals"},
      {"topk.+int2", "six decimals"},
      {"topk-0.1+int2", "six decimals"},
      {"topk0.1.1+int2", "six decimals"},
      {"topk0.01+none", "any format but none and topk"},
      {"topk0.01+topk", "any format but none and topk"},
      {"topk0.01+fp7", "unknown format"},
      {"topk0.01+int2+sr", "no modifiers"},
      {"topk0.01+int4+rht", "no modifiers"},
      {"topk0.01+int2/b100", "multiple of 16"},
      {"topk0.01+int2/b16384", "multiple of 16"},
      {"topk0.01+int2/x", "unexpected"},
      {"topk0.01+int2/b64/b64", "unexpected"},
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

// Fields built one by one (an API handle) are checked like a parsed spec.
TEST(CodecSpec, ValidatesTopkFields) {
  CodecSpec s = parseCodecSpec("topk0.01+int2");
  s.stochastic = true;
  EXPECT_THROW(validateCodecSpec(s), CodecError);
  s = parseCodecSpec("topk0.01+int2");
  s.densityPpm = kPpm + 1;
  EXPECT_THROW(validateCodecSpec(s), CodecError);
  s.densityPpm = 0;
  EXPECT_THROW(validateCodecSpec(s), CodecError);
  s = parseCodecSpec("int2");
  s.densityPpm = 10;  // a topk field on a dense format
  EXPECT_THROW(validateCodecSpec(s), CodecError);
  s = parseCodecSpec("int2");
  s.valueFormat = Format::Int4;
  EXPECT_THROW(validateCodecSpec(s), CodecError);
}

}  // namespace
}  // namespace qccl::codec
