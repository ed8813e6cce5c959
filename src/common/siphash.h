// SipHash-2-4 (Aumasson and Bernstein, 2012): a keyed 64-bit PRF. The bootstrap uses it as the
// MAC with which each side proves it holds the unique id's 128-bit secret.
#pragma once

#include <cstddef>
#include <cstdint>

namespace qccl {

uint64_t sipHash24(const uint8_t key[16], const void* data, size_t size);

}  // namespace qccl
