#include "src/common/params.h"

#include <cerrno>
#include <cstdlib>
#include <mutex>
#include <set>

#include "src/common/error.h"
#include "src/common/log.h"

namespace qccl {

namespace params {
const Param kCodec{"QCCL_CODEC", "none", "codec spec, e.g. fp8e4m3, nvfp4+rht; none = exact"};
const Param kTransport{"QCCL_TRANSPORT", "auto", "auto, ucx, mpi, local"};
const Param kAlgo{"QCCL_ALGO", "sra", "allreduce algorithm: sra, ring, hier, gather"};
const Param kMinBytes{"QCCL_MIN_BYTES", "auto",
                      "messages smaller than this go exact; auto: the cost model decides"};
const Param kOps{"QCCL_OPS", "all",
                 "collectives that may be compressed: allreduce,reducescatter,allgather or all"};
const Param kCompressOneRank{
    "QCCL_COMPRESS_ONE_RANK", "0",
    "1: compress at one rank too (nothing travels; for tests of the codec path on one GPU)"};
const Param kEf{"QCCL_EF", "1", "error feedback on (1) or off (0) for compressed calls"};
const Param kEfDtype{"QCCL_EF_DTYPE", "fp32", "residual storage: fp32 or bf16"};
const Param kEfDecay{
    "QCCL_EF_DECAY", "1",
    "error-feedback decay beta in [0, 1]: each encode adds beta times the residual"};
const Param kTimeout{"QCCL_TIMEOUT", "300", "seconds any wait may last before the call fails"};
const Param kGroupSize{"QCCL_GROUP_SIZE", "0",
                       "hier: ranks per group (0 = ranks per host, from the bootstrap)"};
const Param kSegmentBytes{
    "QCCL_SEGMENT_BYTES", "1048576",
    "compressed collectives: pipeline segment, bytes of fp32 input (0: none)"};
const Param kSocketIfname{"QCCL_SOCKET_IFNAME", "",
                          "interface(s) for the bootstrap, as NCCL_SOCKET_IFNAME"};
const Param kNcclLib{"QCCL_NCCL_LIB", "",
                     "the NCCL library to load (default: libnccl.so.2 as the loader finds it)"};
const Param kPort{"QCCL_PORT", "", "torchrun: the bootstrap port (default MASTER_PORT + 1)"};
const Param kSecret{"QCCL_SECRET", "", "torchrun: the bootstrap secret (32 hex digits)"};
}  // namespace params

std::string paramString(const Param& p) {
  const char* value = std::getenv(p.name);
  if (value == nullptr) return p.defaultValue;
  static std::mutex mutex;
  static std::set<std::string> logged;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (logged.insert(p.name).second) {
      const bool secret = std::string(p.name) == params::kSecret.name;
      QCCL_INFO(kLogEnv, "%s set by environment to %s", p.name, secret ? "(hidden)" : value);
    }
  }
  return value;
}

int64_t paramInt(const Param& p) {
  const std::string text = paramString(p);
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno != 0) {
    throwError(qcclInvalidArgument, "%s=%s is not an integer", p.name, text.c_str());
  }
  return v;
}

bool paramSet(const Param& p) { return std::getenv(p.name) != nullptr; }

}  // namespace qccl
