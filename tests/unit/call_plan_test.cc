// planCall: the one place that decides how a collective runs (src/comm/call_plan.h).
#include "src/comm/call_plan.h"

#include <gtest/gtest.h>

#include "src/comm/settings.h"
#include "src/common/error.h"

namespace qccl {
namespace {

Settings compressing(const char* codec = "fp8e4m3") {
  Settings s;
  s.codec = codec::parseCodecSpec(codec);
  s.minBytes = 1024;
  return s;
}

float buffer[1 << 12];
float other[1 << 12];

ReductionCall call(CollectiveKind kind, size_t count, qcclDataType_t dtype = qcclFloat32,
                   qcclRedOp_t op = qcclSum, const qcclCallConfig_t* config = nullptr) {
  return {kind, buffer, other, count, dtype, op, nullptr, config};
}

const CommShape kFourRanks{4, 2};

qcclResult_t errorOf(const Settings& s, const CommShape& c, const ReductionCall& r) {
  try {
    planCall(s, c, r);
    return qcclSuccess;
  } catch (const Error& e) {
    return e.code();
  }
}

TEST(CallPlan, CompressesLargeFloatSums) {
  const CallPlan plan = planCall(compressing(), kFourRanks, call(CollectiveKind::AllReduce, 1024));
  EXPECT_TRUE(plan.compressed());
  EXPECT_EQ(plan.bytes, 4096u);
  EXPECT_EQ(codec::codecName(plan.codec), "fp8e4m3");
  EXPECT_TRUE(plan.errorFeedback);
}

TEST(CallPlan, EachReasonToStayExact) {
  EXPECT_EQ(
      planCall(compressing("none"), kFourRanks, call(CollectiveKind::AllReduce, 1024)).exactReason,
      ExactReason::CodecNone);
  qcclCallConfig_t exact = QCCL_CALL_CONFIG_INITIALIZER;
  exact.flags = QCCL_CALL_EXACT;
  EXPECT_EQ(planCall(compressing(), kFourRanks,
                     call(CollectiveKind::AllReduce, 1024, qcclFloat32, qcclSum, &exact))
                .exactReason,
            ExactReason::CallFlag);
  EXPECT_EQ(planCall(compressing(), kFourRanks, call(CollectiveKind::AllReduce, 1024, qcclInt32))
                .exactReason,
            ExactReason::Dtype);
  EXPECT_EQ(planCall(compressing(), kFourRanks,
                     call(CollectiveKind::AllReduce, 1024, qcclFloat32, qcclMax))
                .exactReason,
            ExactReason::Op);
  EXPECT_EQ(planCall(compressing(), kFourRanks, call(CollectiveKind::AllReduce, 255)).exactReason,
            ExactReason::BelowMinBytes);
  EXPECT_EQ(planCall(compressing(), {1, 1}, call(CollectiveKind::AllReduce, 1024)).exactReason,
            ExactReason::SingleRank);
  Settings onlyGather = compressing();
  onlyGather.compressedCollectives = collectiveBit(CollectiveKind::AllGather);
  EXPECT_EQ(planCall(onlyGather, kFourRanks, call(CollectiveKind::AllReduce, 1024)).exactReason,
            ExactReason::OpNotEnabled);
  EXPECT_TRUE(planCall(onlyGather, kFourRanks, call(CollectiveKind::AllGather, 1024)).compressed());
  for (ExactReason r : {ExactReason::CodecNone, ExactReason::Op, ExactReason::BelowMinBytes}) {
    EXPECT_STRNE(describe(r), describe(ExactReason::None));
  }
}

TEST(CallPlan, AutoMinBytesLeavesTheSizeToTheModelsThreshold) {
  Settings s = compressing();
  s.minBytesAuto = true;  // minBytes (1024) no longer applies
  CallPlan small = planCall(s, kFourRanks, call(CollectiveKind::AllReduce, 16));
  EXPECT_TRUE(small.compressed());
  EXPECT_TRUE(small.errorFeedback);
  applyAutoMinBytes(small, 65);  // 64 bytes: below
  EXPECT_EQ(small.exactReason, ExactReason::ModelPrefersExact);
  EXPECT_FALSE(small.errorFeedback);
  CallPlan large = planCall(s, kFourRanks, call(CollectiveKind::AllReduce, 16));
  applyAutoMinBytes(large, 64);  // at the threshold: compressed
  EXPECT_TRUE(large.compressed());
  // A plan already exact for another reason keeps it.
  CallPlan max = planCall(s, kFourRanks, call(CollectiveKind::AllReduce, 16, qcclFloat32, qcclMax));
  applyAutoMinBytes(max, SIZE_MAX);
  EXPECT_EQ(max.exactReason, ExactReason::Op);
}

TEST(CallPlan, BitwiseOpsTakeIntegersAndStayExact) {
  for (qcclRedOp_t op : {qcclBitwiseAnd, qcclBitwiseOr, qcclBitwiseXor}) {
    EXPECT_EQ(
        planCall(compressing(), kFourRanks, call(CollectiveKind::AllReduce, 1024, qcclInt32, op))
            .exactReason,
        ExactReason::Dtype);  // integers are never compressed
    EXPECT_EQ(
        errorOf(compressing(), kFourRanks, call(CollectiveKind::AllReduce, 1024, qcclFloat32, op)),
        qcclInvalidArgument);
  }
  EXPECT_EQ(errorOf(compressing(), kFourRanks,
                    call(CollectiveKind::AllReduce, 1024, qcclInt32, qcclRedOp_t(15))),
            qcclInvalidArgument);
}

TEST(CallPlan, CompressFlagLeavesTheSizeOut) {
  qcclCallConfig_t force = QCCL_CALL_CONFIG_INITIALIZER;
  force.flags = QCCL_CALL_COMPRESS;
  // Below QCCL_MIN_BYTES (1024 bytes), and below the cost model's threshold: compressed.
  EXPECT_TRUE(planCall(compressing(), kFourRanks,
                       call(CollectiveKind::AllReduce, 16, qcclFloat32, qcclSum, &force))
                  .compressed());
  Settings s = compressing();
  s.minBytesAuto = true;
  CallPlan small =
      planCall(s, kFourRanks, call(CollectiveKind::AllReduce, 16, qcclFloat32, qcclSum, &force));
  applyAutoMinBytes(small, SIZE_MAX);
  EXPECT_TRUE(small.compressed());
  EXPECT_TRUE(small.errorFeedback);
  // The other reasons still hold.
  EXPECT_EQ(planCall(compressing(), kFourRanks,
                     call(CollectiveKind::AllReduce, 16, qcclInt32, qcclSum, &force))
                .exactReason,
            ExactReason::Dtype);
  EXPECT_EQ(planCall(compressing("none"), kFourRanks,
                     call(CollectiveKind::AllReduce, 16, qcclFloat32, qcclSum, &force))
                .exactReason,
            ExactReason::CodecNone);
  force.flags |= QCCL_CALL_EXACT;
  EXPECT_EQ(errorOf(compressing(), kFourRanks,
                    call(CollectiveKind::AllReduce, 16, qcclFloat32, qcclSum, &force)),
            qcclInvalidArgument);
}

TEST(CallPlan, SizeCountsTheWholeBufferAndAllgatherIgnoresTheOp) {
  // 64 elements per rank: reduce-scatter reads 4 x 64, allgather writes 4 x 64.
  EXPECT_EQ(planCall(compressing(), kFourRanks, call(CollectiveKind::ReduceScatter, 64)).bytes,
            1024u);
  const CallPlan gather = planCall(compressing(), kFourRanks,
                                   call(CollectiveKind::AllGather, 64, qcclBfloat16, qcclMax));
  EXPECT_EQ(gather.bytes, 512u);
  EXPECT_EQ(gather.exactReason, ExactReason::BelowMinBytes);  // not Op
}

TEST(CallPlan, ErrorFeedbackKeysAndSignatures) {
  const Settings s = compressing();
  const CallPlan a = planCall(s, kFourRanks, call(CollectiveKind::AllReduce, 1024));
  ReductionCall moved = call(CollectiveKind::AllReduce, 1024);
  moved.send = other;
  const CallPlan b = planCall(s, kFourRanks, moved);
  EXPECT_NE(a.efKey, b.efKey);              // another buffer, another call site
  EXPECT_EQ(a.efSignature, b.efSignature);  // of the same shape
  const CallPlan longer = planCall(s, kFourRanks, call(CollectiveKind::AllReduce, 2048));
  EXPECT_NE(a.efSignature, longer.efSignature);
  const CallPlan int8 =
      planCall(compressing("int8"), kFourRanks, call(CollectiveKind::AllReduce, 1024));
  EXPECT_NE(a.efSignature, int8.efSignature);
  EXPECT_EQ(a.efKey, int8.efKey);

  qcclCallConfig_t keyed = QCCL_CALL_CONFIG_INITIALIZER;
  keyed.efKey = 42;
  EXPECT_EQ(
      planCall(s, kFourRanks, call(CollectiveKind::AllReduce, 1024, qcclFloat32, qcclSum, &keyed))
          .efKey,
      42u);
  qcclCallConfig_t noEf = QCCL_CALL_CONFIG_INITIALIZER;
  noEf.flags = QCCL_CALL_NO_EF;
  EXPECT_FALSE(
      planCall(s, kFourRanks, call(CollectiveKind::AllReduce, 1024, qcclFloat32, qcclSum, &noEf))
          .errorFeedback);
  Settings off = s;
  off.errorFeedback = false;
  EXPECT_FALSE(planCall(off, kFourRanks, call(CollectiveKind::AllReduce, 1024)).errorFeedback);
  EXPECT_FALSE(
      planCall(s, kFourRanks, call(CollectiveKind::AllReduce, 1024, qcclInt32)).errorFeedback);
}

TEST(CallPlan, CallCodecOverridesAndHierFallsBackWithoutGroups) {
  qcclCallConfig_t withCodec = QCCL_CALL_CONFIG_INITIALIZER;
  withCodec.codec = "int4/b32";
  Settings hier = compressing();
  hier.algorithm = coll::AllreduceAlgorithm::Hier;
  const CallPlan plan = planCall(
      hier, {4, 0}, call(CollectiveKind::AllReduce, 1024, qcclFloat32, qcclSum, &withCodec));
  EXPECT_EQ(codec::codecName(plan.codec), "int4/b32");
  EXPECT_EQ(plan.algorithm, coll::AllreduceAlgorithm::Sra);
  EXPECT_EQ(planCall(hier, kFourRanks, call(CollectiveKind::AllReduce, 1024)).algorithm,
            coll::AllreduceAlgorithm::Hier);
}

TEST(CallPlan, RefusesBadArguments) {
  const Settings s = compressing();
  EXPECT_EQ(errorOf(s, kFourRanks, call(CollectiveKind::AllReduce, 4, qcclDataType_t(99))),
            qcclInvalidArgument);
  EXPECT_EQ(errorOf(s, kFourRanks, call(CollectiveKind::AllReduce, 4, qcclFloat32, qcclRedOp_t(7))),
            qcclInvalidArgument);
  EXPECT_EQ(errorOf(s, kFourRanks, call(CollectiveKind::ReduceScatter, size_t(1) << 55)),
            qcclInvalidArgument);  // 4 x 2^55 elements
  ReductionCall null = call(CollectiveKind::AllReduce, 4);
  null.recv = nullptr;
  EXPECT_EQ(errorOf(s, kFourRanks, null), qcclInvalidArgument);
  null.count = 0;
  EXPECT_EQ(errorOf(s, kFourRanks, null), qcclSuccess);
  qcclCallConfig_t bad = QCCL_CALL_CONFIG_INITIALIZER;
  bad.magic = 0;
  EXPECT_EQ(errorOf(s, kFourRanks, call(CollectiveKind::AllReduce, 4, qcclFloat32, qcclSum, &bad)),
            qcclInvalidArgument);
  bad = QCCL_CALL_CONFIG_INITIALIZER;
  bad.flags = 0x100;
  EXPECT_EQ(errorOf(s, kFourRanks, call(CollectiveKind::AllReduce, 4, qcclFloat32, qcclSum, &bad)),
            qcclInvalidArgument);
  bad = QCCL_CALL_CONFIG_INITIALIZER;
  bad.codec = "fp7";
  EXPECT_EQ(errorOf(s, kFourRanks, call(CollectiveKind::AllReduce, 4, qcclFloat32, qcclSum, &bad)),
            qcclInvalidArgument);
}

TEST(CollectiveSet, ParsesNamesAndRefusesOthers) {
  EXPECT_EQ(parseCollectiveSet("all"), kAllCollectives);
  EXPECT_EQ(parseCollectiveSet("allreduce,allgather"),
            collectiveBit(CollectiveKind::AllReduce) | collectiveBit(CollectiveKind::AllGather));
  EXPECT_THROW(parseCollectiveSet("allreduce,broadcast"), Error);
  EXPECT_THROW(parseCollectiveSet(""), Error);
  EXPECT_EQ(parseCollectiveKind("reducescatter"), CollectiveKind::ReduceScatter);
  EXPECT_THROW(parseCollectiveKind("all"), Error);
}

TEST(Settings, MinBytesIsAutoUnlessASizeIsGiven) {
  EXPECT_TRUE(resolveSettings(nullptr).minBytesAuto);  // the default (QCCL_MIN_BYTES unset here)
  qcclConfig_t c = QCCL_CONFIG_INITIALIZER;
  c.minBytes = 4096;
  EXPECT_FALSE(resolveSettings(&c).minBytesAuto);
  EXPECT_EQ(resolveSettings(&c).minBytes, 4096u);
  c.minBytes = QCCL_MIN_BYTES_AUTO;
  EXPECT_TRUE(resolveSettings(&c).minBytesAuto);
}

}  // namespace
}  // namespace qccl
