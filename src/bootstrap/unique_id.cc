#include "src/bootstrap/unique_id.h"

#include <cstring>

#include "src/common/error.h"

namespace qccl::bootstrap {

namespace {
// Byte layout: magic "QCID" | version | family (4 or 6) | port (big-endian) | address (16) |
// secret (16) | zeros.
constexpr char kMagic[4] = {'Q', 'C', 'I', 'D'};
constexpr uint8_t kVersion = 1;

int hexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void fromHex(const std::string& hex, uint8_t* out, size_t bytes, const char* what) {
  if (hex.size() != 2 * bytes) {
    throwError(qcclInvalidArgument, "%s: expected %zu hex digits, got %zu", what, 2 * bytes,
               hex.size());
  }
  for (size_t i = 0; i < bytes; ++i) {
    const int hi = hexDigit(hex[2 * i]), lo = hexDigit(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) throwError(qcclInvalidArgument, "%s: not hexadecimal", what);
    out[i] = uint8_t(hi << 4 | lo);
  }
}
}  // namespace

qcclUniqueId encodeUniqueId(const RootInfo& info) {
  qcclUniqueId id;
  std::memset(&id, 0, sizeof id);
  uint8_t* b = reinterpret_cast<uint8_t*>(id.internal);
  std::memcpy(b, kMagic, 4);
  b[4] = kVersion;
  const bool v6 = info.address.storage.ss_family == AF_INET6;
  b[5] = v6 ? 6 : 4;
  const uint16_t port = info.address.port();
  b[6] = uint8_t(port >> 8);
  b[7] = uint8_t(port);
  if (v6) {
    std::memcpy(b + 8, &reinterpret_cast<const sockaddr_in6*>(&info.address.storage)->sin6_addr,
                16);
  } else {
    std::memcpy(b + 8, &reinterpret_cast<const sockaddr_in*>(&info.address.storage)->sin_addr, 4);
  }
  std::memcpy(b + 24, info.secret.data(), 16);
  return id;
}

RootInfo decodeUniqueId(const qcclUniqueId& id) {
  const uint8_t* b = reinterpret_cast<const uint8_t*>(id.internal);
  if (std::memcmp(b, kMagic, 4) != 0 || b[4] != kVersion || (b[5] != 4 && b[5] != 6)) {
    throwError(qcclInvalidArgument, "unique id was not made by qcclGetUniqueId (bad magic)");
  }
  RootInfo info;
  const uint16_t port = uint16_t(b[6] << 8 | b[7]);
  if (b[5] == 6) {
    auto* a = reinterpret_cast<sockaddr_in6*>(&info.address.storage);
    a->sin6_family = AF_INET6;
    std::memcpy(&a->sin6_addr, b + 8, 16);
    info.address.length = sizeof(sockaddr_in6);
  } else {
    auto* a = reinterpret_cast<sockaddr_in*>(&info.address.storage);
    a->sin_family = AF_INET;
    std::memcpy(&a->sin_addr, b + 8, 4);
    info.address.length = sizeof(sockaddr_in);
  }
  info.address.setPort(port);
  std::memcpy(info.secret.data(), b + 24, 16);
  return info;
}

std::string uniqueIdToHex(const qcclUniqueId& id) {
  static const char* kDigits = "0123456789abcdef";
  std::string hex;
  for (size_t i = 0; i < sizeof id.internal; ++i) {
    const uint8_t v = uint8_t(id.internal[i]);
    hex += kDigits[v >> 4];
    hex += kDigits[v & 15];
  }
  return hex;
}

qcclUniqueId uniqueIdFromHex(const std::string& hex) {
  qcclUniqueId id;
  fromHex(hex, reinterpret_cast<uint8_t*>(id.internal), sizeof id.internal, "QCCL_COMM_ID");
  return id;
}

Secret parseSecret(const std::string& hex) {
  Secret s;
  fromHex(hex, s.data(), s.size(), "QCCL_SECRET");
  return s;
}

}  // namespace qccl::bootstrap
