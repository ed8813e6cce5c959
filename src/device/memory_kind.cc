#include "src/device/memory_kind.h"

#include <dlfcn.h>
#include <link.h>

#include <atomic>
#include <cstdint>

namespace qccl::device {

namespace {

// The CUDA driver API's cuPointerGetAttribute and the constants it takes (cuda.h), declared
// here so that this builds without CUDA.
using PointerGetAttribute = int (*)(void* data, int attribute, unsigned long long pointer);
constexpr int kMemoryTypeAttribute = 2;     // CU_POINTER_ATTRIBUTE_MEMORY_TYPE
constexpr int kDeviceOrdinalAttribute = 9;  // CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL
constexpr unsigned kMemoryTypeDevice = 2;   // CU_MEMORYTYPE_DEVICE
constexpr unsigned kMemoryTypeUnified = 4;  // CU_MEMORYTYPE_UNIFIED

// How many shared objects the process has loaded so far (glibc counts every load).
unsigned long long objectsLoaded() {
  unsigned long long adds = 0;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        *static_cast<unsigned long long*>(data) = info->dlpi_adds;
        return 1;  // the first object carries the count
      },
      &adds);
  return adds;
}

// The driver's entry point once the process has loaded the driver (which then stays), else
// nullptr. Asking the loader costs a search of the file system (~17 us), so it is asked again
// only after the process has loaded something new.
PointerGetAttribute driverQuery() {
  static std::atomic<PointerGetAttribute> found{nullptr};
  static std::atomic<unsigned long long> lookedAt{0};
  if (PointerGetAttribute query = found.load()) return query;
  const unsigned long long loaded = objectsLoaded();
  if (loaded == lookedAt.load()) return nullptr;
  lookedAt.store(loaded);
  void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (driver == nullptr) return nullptr;
  auto query = reinterpret_cast<PointerGetAttribute>(dlsym(driver, "cuPointerGetAttribute"));
  found.store(query);
  return query;  // the reference RTLD_NOLOAD took is kept: the driver never goes
}

}  // namespace

Placement placementOf(const void* pointer) {
  Placement p;
  if (pointer == nullptr) return p;
  const PointerGetAttribute query = driverQuery();
  if (query == nullptr) return p;
  unsigned type = 0;
  const auto address = reinterpret_cast<unsigned long long>(pointer);
  if (query(&type, kMemoryTypeAttribute, address) != 0) return p;  // unknown to CUDA: host
  if (type != kMemoryTypeDevice && type != kMemoryTypeUnified) return p;
  int ordinal = -1;
  if (query(&ordinal, kDeviceOrdinalAttribute, address) != 0) return p;
  p.kind = coll::MemoryKind::Device;
  p.device = ordinal;
  return p;
}

}  // namespace qccl::device
