#include "collectives/memory.h"

#include <new>
#include <utility>

namespace qccl::coll {

const char* memoryName(MemoryKind kind) { return kind == MemoryKind::Host ? "host" : "device"; }

namespace {
class HostAllocator : public Allocator {
 public:
  MemoryKind kind() const override { return MemoryKind::Host; }
  void* allocate(size_t bytes) override { return ::operator new(bytes); }  // bad_alloc: SystemError
  void release(void* memory) noexcept override { ::operator delete(memory); }
};
}  // namespace

Allocator& hostAllocator() {
  static HostAllocator allocator;
  return allocator;
}

Buffer::Buffer(Buffer&& other) noexcept
    : allocator_(other.allocator_),
      memory_(std::exchange(other.memory_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      capacity_(std::exchange(other.capacity_, 0)) {}

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    allocator_->release(memory_);
    allocator_ = other.allocator_;
    memory_ = std::exchange(other.memory_, nullptr);
    size_ = std::exchange(other.size_, 0);
    capacity_ = std::exchange(other.capacity_, 0);
  }
  return *this;
}

void Buffer::resize(size_t bytes) {
  if (bytes > capacity_) {
    uint8_t* grown = static_cast<uint8_t*>(allocator_->allocate(bytes));
    allocator_->release(memory_);
    memory_ = grown;
    capacity_ = bytes;
  }
  size_ = bytes;
}

}  // namespace qccl::coll
