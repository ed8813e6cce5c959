#include "collectives/reduction.h"

#include <cmath>
#include <cstring>
#include <type_traits>

#include "codecs/element/minifloat.h"
#include "src/common/error.h"

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
      case qcclBitwiseAnd: return A(U(a) & U(b));
      case qcclBitwiseOr: return A(U(a) | U(b));
      case qcclBitwiseXor: return A(U(a) ^ U(b));
      default: return A(U(a) + U(b));
    }
  }
}

// How each dtype's elements are stored: the C type, and its conversion to the accumulation type.
template <class T>
struct Plain {
  using Storage = T;
  template <class A>
  static A load(T v) {
    return A(v);
  }
  template <class A>
  static T store(A v) {
    return T(v);
  }
};

template <class F, class T>
struct Minifloat {
  using Storage = T;
  template <class A>
  static A load(T v) {
    return A(decode<F>(v));
  }
  template <class A>
  static T store(A v) {
    return T(encodeRne<F>(float(v)));
  }
};

// acc[i] = acc[i] op in[i] for every element: a typed loop per op.
template <qcclRedOp_t kOp, class A, class S>
void addEach(A* acc, const typename S::Storage* in, size_t count) {
  for (size_t i = 0; i < count; ++i) acc[i] = combine<A>(kOp, acc[i], S::template load<A>(in[i]));
}

// Calls fn(Plain<T>{} or Minifloat<F, T>{}) for dtype: the switch happens once per call, not per
// element, so the loops inside fn are plain typed loops.
template <class Fn>
void withStorage(qcclDataType_t dtype, Fn&& fn) {
  switch (dtype) {
    case qcclInt8: return fn(Plain<int8_t>{});
    case qcclUint8: return fn(Plain<uint8_t>{});
    case qcclInt32: return fn(Plain<int32_t>{});
    case qcclUint32: return fn(Plain<uint32_t>{});
    case qcclInt64: return fn(Plain<int64_t>{});
    case qcclUint64: return fn(Plain<uint64_t>{});
    case qcclFloat32: return fn(Plain<float>{});
    case qcclFloat64: return fn(Plain<double>{});
    case qcclFloat16: return fn(Minifloat<Fp16, uint16_t>{});
    case qcclBfloat16: return fn(Minifloat<Bf16, uint16_t>{});
    case qcclFloat8e4m3: return fn(Minifloat<E4M3, uint8_t>{});
    case qcclFloat8e5m2: return fn(Minifloat<E5M2, uint8_t>{});
    default: return;
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

bool accumulatesInOwnType(qcclDataType_t dtype) {
  bool own = false;
  withAccType(dtype, [&](auto a) { own = sizeof a == dataTypeSize(dtype); });
  return own;
}

Accumulator::Accumulator(qcclDataType_t dtype, qcclRedOp_t op, size_t count, Buffer& storage)
    : dtype_(dtype), op_(op), count_(count) {
  withAccType(dtype, [&](auto a) { storage.resize(count * sizeof a); });
  acc_ = storage.data();
}

void Accumulator::add(const void* contribution) {
  withAccType(dtype_, [&](auto zero) {
    using A = decltype(zero);
    withStorage(dtype_, [&](auto storage) {
      using S = decltype(storage);
      const auto* in = static_cast<const typename S::Storage*>(contribution);
      A* acc = reinterpret_cast<A*>(acc_);
      if (empty_) {
        for (size_t i = 0; i < count_; ++i) acc[i] = S::template load<A>(in[i]);
        return;
      }
      switch (op_) {  // one loop per op, so each vectorises
        case qcclProd: return addEach<qcclProd, A, S>(acc, in, count_);
        case qcclMax: return addEach<qcclMax, A, S>(acc, in, count_);
        case qcclMin: return addEach<qcclMin, A, S>(acc, in, count_);
        case qcclBitwiseAnd: return addEach<qcclBitwiseAnd, A, S>(acc, in, count_);
        case qcclBitwiseOr: return addEach<qcclBitwiseOr, A, S>(acc, in, count_);
        case qcclBitwiseXor: return addEach<qcclBitwiseXor, A, S>(acc, in, count_);
        default: return addEach<qcclSum, A, S>(acc, in, count_);
      }
    });
  });
  empty_ = false;
}

void Accumulator::finish(int contributors, void* out) const {
  withAccType(dtype_, [&](auto zero) {
    using A = decltype(zero);
    withStorage(dtype_, [&](auto storage) {
      using S = decltype(storage);
      auto* o = static_cast<typename S::Storage*>(out);
      const A* acc = reinterpret_cast<const A*>(acc_);
      if (op_ == qcclAvg) {
        for (size_t i = 0; i < count_; ++i)
          o[i] = S::template store<A>(A(acc[i] / A(contributors)));
      } else {
        for (size_t i = 0; i < count_; ++i) o[i] = S::template store<A>(acc[i]);
      }
    });
  });
}

void toFloat32(const void* in, qcclDataType_t dtype, size_t count, float* out) {
  withStorage(dtype, [&](auto storage) {
    using S = decltype(storage);
    const auto* i = static_cast<const typename S::Storage*>(in);
    for (size_t k = 0; k < count; ++k) out[k] = S::template load<float>(i[k]);
  });
}

void addAsFloat32(const void* in, qcclDataType_t dtype, size_t count, float* acc) {
  withStorage(dtype, [&](auto storage) {
    using S = decltype(storage);
    const auto* i = static_cast<const typename S::Storage*>(in);
    for (size_t k = 0; k < count; ++k) acc[k] += S::template load<float>(i[k]);
  });
}

void fromFloat32(const float* in, size_t count, qcclDataType_t dtype, void* out) {
  withStorage(dtype, [&](auto storage) {
    using S = decltype(storage);
    auto* o = static_cast<typename S::Storage*>(out);
    for (size_t k = 0; k < count; ++k) o[k] = S::template store<float>(in[k]);
  });
}

}  // namespace qccl::coll
