// Which tile format (tile_formats.h) runs a codec: fn.template operator()<Q>() with the one for
// the spec's format (format none: by the dtype the chunk holds). Shared by the CUDA launch layer
// and the tests that emulate it, so both run the same instantiations.
#pragma once

#include "codecs/codec_spec.h"
#include "codecs/device/tile_formats.h"
#include "qccl/qccl.h"

namespace qccl {
inline namespace QCCL_ISA {
namespace tile {

template <class Fn>
decltype(auto) withTileFormat(codec::Format format, qcclDataType_t noneType, Fn&& fn) {
  using codec::Format;
  switch (format) {
    case Format::None:
      if (noneType == qcclFloat32) return fn.template operator()<RawTile>();
      if (noneType == qcclBfloat16) return fn.template operator()<CastTile<Bf16>>();
      return fn.template operator()<CastTile<Fp16>>();
    case Format::Bf16: return fn.template operator()<CastTile<Bf16>>();
    case Format::Fp16: return fn.template operator()<CastTile<Fp16>>();
    case Format::Fp8E4M3: return fn.template operator()<Fp8Tile<E4M3>>();
    case Format::Fp8E5M2: return fn.template operator()<Fp8Tile<E5M2>>();
    case Format::MxFp8: return fn.template operator()<MxTile<E4M3>>();
    case Format::MxFp4: return fn.template operator()<MxTile<E2M1>>();
    case Format::NvFp4: return fn.template operator()<NvFp4Tile>();
    case Format::Fp4Ue5m3: return fn.template operator()<Ue5m3Tile>();
    case Format::Int8: return fn.template operator()<IntTile<8>>();
    case Format::Int4: return fn.template operator()<IntTile<4>>();
    case Format::Int2: return fn.template operator()<Int2Tile>();
    case Format::TopK:  // selects before any kernel runs (codecs/topk_codec.h): never here
    case Format::Sign1: break;
  }
  return fn.template operator()<Sign1Tile>();
}

}  // namespace tile
}  // namespace QCCL_ISA
}  // namespace qccl
