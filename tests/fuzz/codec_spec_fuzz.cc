// libFuzzer target: the codec-spec parser (qcclCodecParse) on any string. A spec it accepts
// must print (qcclCodecName) to a name that parses back to the same codec; a refused one must
// leave a message in qcclGetLastError.
#include <qccl/qccl_codec.h>

#include <cstdlib>
#include <cstring>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string spec(reinterpret_cast<const char*>(data), size);  // stops at a NUL inside
  qcclCodec_t codec;
  if (qcclCodecParse(spec.c_str(), &codec) != qcclSuccess) {
    if (std::strlen(qcclGetLastError(nullptr)) == 0) std::abort();
    return 0;
  }
  char name[256];
  if (qcclCodecName(codec, name, sizeof name) != qcclSuccess) std::abort();
  qcclCodec_t again;
  if (qcclCodecParse(name, &again) != qcclSuccess) std::abort();
  if (std::memcmp(&codec, &again, sizeof codec) != 0) std::abort();
  return 0;
}
