#include "codecs/codec_error.h"

#include <cstdarg>
#include <cstdio>

namespace qccl::codec {

void throwCodecError(ErrorKind kind, const char* format, ...) {
  char message[512];
  va_list args;
  va_start(args, format);
  std::vsnprintf(message, sizeof message, format, args);
  va_end(args);
  throw CodecError(kind, message);
}

}  // namespace qccl::codec
