// Every QCCL_* setting read from the environment, declared once with its name, default and
// meaning (docs/ENV.md lists the same). A value taken from the environment is logged once at INFO.
#pragma once

#include <cstdint>
#include <string>

namespace qccl {

struct Param {
  const char* name;
  const char* defaultValue;
  const char* doc;
};

namespace params {
extern const Param kCodec;
extern const Param kTransport;
extern const Param kAlgo;
extern const Param kMinBytes;
extern const Param kOps;
extern const Param kCompressOneRank;
extern const Param kEf;
extern const Param kEfDtype;
extern const Param kEfDecay;
extern const Param kTimeout;
extern const Param kGroupSize;
extern const Param kSegmentBytes;
extern const Param kSocketIfname;
extern const Param kNcclLib;
extern const Param kPort;
extern const Param kSecret;
}  // namespace params

// The environment's value, else the default.
std::string paramString(const Param& p);
// As an integer; throws Error(qcclInvalidArgument) naming the variable when it is not one.
int64_t paramInt(const Param& p);
// True when the environment sets it (to anything).
bool paramSet(const Param& p);

}  // namespace qccl
