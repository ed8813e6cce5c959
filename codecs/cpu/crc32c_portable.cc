#include "codecs/cpu/crc32c.h"

#include <array>

namespace qccl::codec {

namespace {
constexpr uint32_t kPolynomial = 0x82F63B78u;

constexpr std::array<uint32_t, 256> makeTable() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ ((c & 1) ? kPolynomial : 0);
    table[i] = c;
  }
  return table;
}
constexpr std::array<uint32_t, 256> kTable = makeTable();
}  // namespace

uint32_t crc32cPortable(uint32_t crc, const uint8_t* data, size_t size) {
  crc = ~crc;
  for (size_t i = 0; i < size; ++i) crc = (crc >> 8) ^ kTable[(crc ^ data[i]) & 0xFF];
  return ~crc;
}

}  // namespace qccl::codec
