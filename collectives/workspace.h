// Memory the collectives reuse from call to call: a communicator owns one workspace, so that in
// steady state a call allocates nothing and touches no fresh pages (first-touch page faults cost
// more than the codecs on large messages).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>

namespace qccl::coll {

// A byte buffer that keeps its memory and does not zero it.
class Buffer {
 public:
  uint8_t* data() { return memory_.get(); }
  const uint8_t* data() const { return memory_.get(); }
  size_t size() const { return size_; }
  // Contents are unspecified afterwards.
  void resize(size_t bytes) {
    if (bytes > capacity_) {
      memory_.reset(new uint8_t[bytes]);
      capacity_ = bytes;
    }
    size_ = bytes;
  }

 private:
  std::unique_ptr<uint8_t[]> memory_;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

class Workspace {
 public:
  // The buffer of (site, index): site names the algorithm's use, index the peer or slot, so
  // nested algorithms never share one. Keyed by the name's text, not its address, because
  // identical literals need not be merged.
  Buffer& buffer(const char* site, size_t index) { return buffers_[{site, index}]; }
  // count floats, contents unspecified.
  float* floats(const char* site, size_t count) {
    Buffer& b = buffer(site, ~size_t(0));
    b.resize(count * sizeof(float));
    return reinterpret_cast<float*>(b.data());
  }

 private:
  std::map<std::pair<std::string, size_t>, Buffer> buffers_;
};

}  // namespace qccl::coll
