#include <cstdlib>
#include <cstring>

#if defined(QCCL_HAVE_X86_KERNELS)
#include <cpuid.h>
#endif

#include "codecs/codec_error.h"
#include "codecs/cpu/kernels.h"

namespace qccl {
// Each target's table, defined in kernels_<target>.cc inside that target's namespace.
namespace portable {
const codec::KernelTable& isaKernelTable();
}
#if defined(QCCL_HAVE_X86_KERNELS)
namespace avx2 {
const codec::KernelTable& isaKernelTable();
}
namespace avx512 {
const codec::KernelTable& isaKernelTable();
}
#endif
}  // namespace qccl

namespace qccl::codec {

namespace {

size_t lcm(size_t a, size_t b) {
  size_t x = a, y = b;
  while (y) {
    const size_t t = x % y;
    x = y;
    y = t;
  }
  return a / x * b;
}

#if defined(QCCL_HAVE_X86_KERNELS)
// CPUID leaf 1, ECX bit 29 (older clang's __builtin_cpu_supports does not know "f16c").
bool hasF16c() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  return __get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 29)) != 0;
}
#endif

const KernelTable& selectKernels() {
  const std::vector<const KernelTable*> tables = runnableCpuKernels();
  const char* wanted = std::getenv("QCCL_CPU_KERNELS");
  if (wanted == nullptr || *wanted == '\0' || std::strcmp(wanted, "auto") == 0) {
    return *tables.back();
  }
  for (const KernelTable* t : tables) {
    if (std::strcmp(t->name, wanted) == 0) return *t;
  }
  throwCodecError(ErrorKind::InvalidArgument,
                  "QCCL_CPU_KERNELS=%s: not a kernel target this CPU can run (best: %s)", wanted,
                  tables.back()->name);
}

}  // namespace

// At least 2048 elements, so per-tile work amortises; whole blocks and whole +rht runs. A tile
// holds at most 256 blocks: below 4096 elements with blocks of 16 or more, or else exactly
// lcm(block, R) elements, which is at most R <= 256 blocks.
size_t tileElements(const CodecSpec& spec) {
  const size_t unit = lcm(spec.block ? spec.block : 16, spec.rhtSize ? spec.rhtSize : 1);
  return (2048 + unit - 1) / unit * unit;
}

// Five tile-sized arrays: prepared values, error-feedback copy, decoded values, random bits,
// block factors.
size_t kernelScratchFloats(const CodecSpec& spec) { return 5 * tileElements(spec); }

std::vector<const KernelTable*> runnableCpuKernels() {
  std::vector<const KernelTable*> tables{&portable::isaKernelTable()};
#if defined(QCCL_HAVE_X86_KERNELS)
  __builtin_cpu_init();
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && hasF16c() &&
                    __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("sse4.2");
  if (avx2) tables.push_back(&avx2::isaKernelTable());
  if (avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl")) {
    tables.push_back(&avx512::isaKernelTable());
  }
#endif
  return tables;
}

const KernelTable& cpuKernels() {
  static const KernelTable& chosen = selectKernels();
  return chosen;
}

}  // namespace qccl::codec
