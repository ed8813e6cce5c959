// libFuzzer target: what the bootstrap reads from the network and the environment. The root's
// reading of a connection (HandshakeReader, as root.cc drives it) gets the input split into
// reads of the sizes its first bytes choose, its proof accepted whenever one completes; the
// unique-id decoder gets the input as an id and as QCCL_COMM_ID's hex. Nothing may crash, read out
// of bounds or ask for more than a payload's worth of bytes.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

#include "src/bootstrap/handshake.h"
#include "src/bootstrap/unique_id.h"
#include "src/common/error.h"

namespace {

void readHandshake(const uint8_t* data, size_t size) {
  using qccl::bootstrap::HandshakeReader;
  if (size < 1) return;
  const size_t chunk = data[0] % 32 + 1;  // bytes per read, as recv might return them
  HandshakeReader reader;
  for (size_t at = 1; at < size;) {
    const size_t wanted = reader.wanted();
    if (wanted == 0 || wanted > 12 + qccl::bootstrap::kMaxPayloadBytes + 0xFFFFFFFFull)
      std::abort();
    const size_t n = std::min({chunk, wanted, size - at});
    const HandshakeReader::Event e = reader.take(reinterpret_cast<const char*>(data + at), n);
    at += n;
    if (e == HandshakeReader::Event::Proof) {
      (void)reader.proof();
      (void)reader.peerNonce();
      reader.proofAccepted();
    } else if (e == HandshakeReader::Event::Join) {
      if (reader.payload().size() != reader.payloadBytes()) std::abort();
      return;
    } else if (e == HandshakeReader::Event::Oversized) {
      if (reader.payloadBytes() <= qccl::bootstrap::kMaxPayloadBytes) std::abort();
      return;
    }
  }
}

void decodeIds(const uint8_t* data, size_t size) {
  qcclUniqueId id;
  std::memset(&id, 0, sizeof id);
  std::memcpy(id.internal, data, std::min(size, sizeof id.internal));
  try {
    qccl::bootstrap::decodeUniqueId(id);
  } catch (const qccl::Error&) {
  }
  try {
    qccl::bootstrap::uniqueIdFromHex(std::string(reinterpret_cast<const char*>(data), size));
  } catch (const qccl::Error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  readHandshake(data, size);
  decodeIds(data, size);
  return 0;
}
