// Compiled with -msse4.2 on x86-64 only (CMakeLists.txt).
#include <nmmintrin.h>

#include <cstring>

#include "codecs/cpu/crc32c.h"

namespace qccl::codec {

uint32_t crc32cSse42(uint32_t crc, const uint8_t* data, size_t size) {
  uint64_t c = ~crc;
  size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    uint64_t word;
    std::memcpy(&word, data + i, 8);
    c = _mm_crc32_u64(c, word);
  }
  uint32_t c32 = uint32_t(c);
  for (; i < size; ++i) c32 = _mm_crc32_u8(c32, data[i]);
  return ~c32;
}

}  // namespace qccl::codec
