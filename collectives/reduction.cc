#include "collectives/reduction.h"

#include <cmath>
#include <cstring>
#include <type_traits>

#include "common/error.h"
#include "element/minifloat.h"

namespace qccl::coll {

namespace {

template <class A>
A combine(qcclRedOp_t op, A a, A b) {
  if constexpr (std::is_floating_point_v<A>) {
    switch (op) {
      case qcclProd: return a * b;
      case qcclMax: return std::isnan(a) || std::isnan(b) ? a + b : (a > b ? a : b);
      case qcclMin: return std::isnan(a) || std::isnan(b) ? a + b : (a < b ? a : b);
      default: return a + b;  // Sum, Avg
    }
  } else {
    using U = std::make_unsigned_t<A>;  // wrapping, never signed overflow
    switch (op) {
      case qcclProd: return A(U(a) * U(b));
      case qcclMax: return a > b ? a : b;
      case qcclMin: return a < b ? a : b;
      default: return A(U(a) + U(b));
    }
  }
}

// Load element i of a dtype array into the accumulation type, and store back.
template <class A>
A loadAs(const void* in, qcclDataType_t dtype, size_t i) {
  switch (dtype) {
    case qcclInt8: return A(static_cast<const int8_t*>(in)[i]);
    case qcclUint8: return A(static_cast<const uint8_t*>(in)[i]);
    case qcclInt32: return A(static_cast<const int32_t*>(in)[i]);
    case qcclUint32: return A(static_cast<const uint32_t*>(in)[i]);
    case qcclInt64: return A(static_cast<const int64_t*>(in)[i]);
    case qcclUint64: return A(static_cast<const uint64_t*>(in)[i]);
    case qcclFloat32: return A(static_cast<const float*>(in)[i]);
    case qcclFloat64: return A(static_cast<const double*>(in)[i]);
    case qcclFloat16: return A(decode<Fp16>(static_cast<const uint16_t*>(in)[i]));
    case qcclBfloat16: return A(decode<Bf16>(static_cast<const uint16_t*>(in)[i]));
    case qcclFloat8e4m3: return A(decode<E4M3>(static_cast<const uint8_t*>(in)[i]));
    case qcclFloat8e5m2: return A(decode<E5M2>(static_cast<const uint8_t*>(in)[i]));
    default: return A(0);
  }
}

template <class A>
void storeFrom(A v, qcclDataType_t dtype, void* out, size_t i) {
  switch (dtype) {
    case qcclInt8: static_cast<int8_t*>(out)[i] = int8_t(v); break;
    case qcclUint8: static_cast<uint8_t*>(out)[i] = uint8_t(v); break;
    case qcclInt32: static_cast<int32_t*>(out)[i] = int32_t(v); break;
    case qcclUint32: static_cast<uint32_t*>(out)[i] = uint32_t(v); break;
    case qcclInt64: static_cast<int64_t*>(out)[i] = int64_t(v); break;
    case qcclUint64: static_cast<uint64_t*>(out)[i] = uint64_t(v); break;
    case qcclFloat32: static_cast<float*>(out)[i] = float(v); break;
    case qcclFloat64: static_cast<double*>(out)[i] = double(v); break;
    case qcclFloat16: static_cast<uint16_t*>(out)[i] = uint16_t(encodeRne<Fp16>(float(v))); break;
    case qcclBfloat16: static_cast<uint16_t*>(out)[i] = uint16_t(encodeRne<Bf16>(float(v))); break;
    case qcclFloat8e4m3: static_cast<uint8_t*>(out)[i] = uint8_t(encodeRne<E4M3>(float(v))); break;
    case qcclFloat8e5m2: static_cast<uint8_t*>(out)[i] = uint8_t(encodeRne<E5M2>(float(v))); break;
    default: break;
  }
}

// Calls fn(A{}) with the accumulation type of dtype.
template <class Fn>
void withAccType(qcclDataType_t dtype, Fn&& fn) {
  switch (dtype) {
    case qcclInt8: return fn(int8_t{});
    case qcclUint8: return fn(uint8_t{});
    case qcclInt32: return fn(int32_t{});
    case qcclUint32: return fn(uint32_t{});
    case qcclInt64: return fn(int64_t{});
    case qcclUint64: return fn(uint64_t{});
    case qcclFloat64: return fn(double{});
    default: return fn(float{});  // fp32, fp16, bf16, fp8
  }
}

}  // namespace

size_t dataTypeSize(qcclDataType_t dtype) {
  switch (dtype) {
    case qcclInt8:
    case qcclUint8:
    case qcclFloat8e4m3:
    case qcclFloat8e5m2: return 1;
    case qcclFloat16:
    case qcclBfloat16: return 2;
    case qcclInt32:
    case qcclUint32:
    case qcclFloat32: return 4;
    case qcclInt64:
    case qcclUint64:
    case qcclFloat64: return 8;
    default: return 0;
  }
}

bool isFloatType(qcclDataType_t dtype) {
  return dtype == qcclFloat16 || dtype == qcclFloat32 || dtype == qcclFloat64 ||
         dtype == qcclBfloat16 || dtype == qcclFloat8e4m3 || dtype == qcclFloat8e5m2;
}

Accumulator::Accumulator(qcclDataType_t dtype, qcclRedOp_t op, size_t count)
    : dtype_(dtype), op_(op), count_(count) {
  withAccType(dtype, [&](auto a) { acc_.resize(count * sizeof a); });
}

void Accumulator::add(const void* contribution) {
  withAccType(dtype_, [&](auto zero) {
    using A = decltype(zero);
    A* acc = reinterpret_cast<A*>(acc_.data());
    for (size_t i = 0; i < count_; ++i) {
      const A v = loadAs<A>(contribution, dtype_, i);
      acc[i] = empty_ ? v : combine<A>(op_, acc[i], v);
    }
  });
  empty_ = false;
}

void Accumulator::finish(int contributors, void* out) const {
  withAccType(dtype_, [&](auto zero) {
    using A = decltype(zero);
    const A* acc = reinterpret_cast<const A*>(acc_.data());
    for (size_t i = 0; i < count_; ++i) {
      A v = acc[i];
      if (op_ == qcclAvg) v = A(v / A(contributors));
      storeFrom<A>(v, dtype_, out, i);
    }
  });
}

void toFloat32(const void* in, qcclDataType_t dtype, size_t count, float* out) {
  if (dtype == qcclFloat32) {
    std::memcpy(out, in, 4 * count);
    return;
  }
  for (size_t i = 0; i < count; ++i) out[i] = loadAs<float>(in, dtype, i);
}

void fromFloat32(const float* in, size_t count, qcclDataType_t dtype, void* out) {
  if (dtype == qcclFloat32) {
    std::memcpy(out, in, 4 * count);
    return;
  }
  for (size_t i = 0; i < count; ++i) storeFrom<float>(in[i], dtype, out, i);
}

}  // namespace qccl::coll
