// CRC32C (Castagnoli, reflected polynomial 0x82F63B78), as iSCSI and SSE4.2's crc32 compute it.
// crc is the running value: start with 0, feed the previous result to continue.
#pragma once

#include <cstddef>
#include <cstdint>

namespace qccl::codec {

uint32_t crc32cPortable(uint32_t crc, const uint8_t* data, size_t size);
// Needs SSE4.2 (the avx2 and avx512 targets imply it).
uint32_t crc32cSse42(uint32_t crc, const uint8_t* data, size_t size);

}  // namespace qccl::codec
