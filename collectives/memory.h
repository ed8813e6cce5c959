// Memory the collectives allocate for themselves (workspace, error-feedback residuals): of the
// kind the call's executor works on, host or device, through that kind's allocator.
#pragma once

#include <cstddef>
#include <cstdint>

namespace qccl::coll {

enum class MemoryKind : uint8_t { Host, Device };

const char* memoryName(MemoryKind kind);

class Allocator {
 public:
  virtual ~Allocator() = default;
  virtual MemoryKind kind() const = 0;
  // Throws Error (qcclSystemError, or qcclUnhandledCudaError for device memory) when it cannot.
  virtual void* allocate(size_t bytes) = 0;
  virtual void release(void* memory) noexcept = 0;
};

// Plain host memory (operator new).
Allocator& hostAllocator();

// Bytes of one kind, kept between calls: grows, never shrinks, and does not zero.
class Buffer {
 public:
  explicit Buffer(Allocator& allocator) : allocator_(&allocator) {}
  Buffer(Buffer&& other) noexcept;
  Buffer& operator=(Buffer&& other) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() { allocator_->release(memory_); }

  uint8_t* data() { return memory_; }
  const uint8_t* data() const { return memory_; }
  size_t size() const { return size_; }
  MemoryKind kind() const { return allocator_->kind(); }
  // Contents are unspecified afterwards.
  void resize(size_t bytes);

 private:
  Allocator* allocator_;
  uint8_t* memory_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

}  // namespace qccl::coll
