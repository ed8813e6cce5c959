#include "src/comm/masked_calls.h"

#include <cstring>
#include <vector>

#include "collectives/chunk_codec.h"
#include "collectives/collectives.h"
#include "collectives/reduction.h"
#include "src/comm/call_guard.h"
#include "src/comm/call_plan.h"
#include "src/comm/call_route.h"
#include "src/common/error.h"
#include "src/ef/ef_store.h"

namespace qccl {

namespace {

// Masked calls keep their residuals apart from a dense call's under the same key.
constexpr uint64_t kMaskedSignature = 0x6d61736b65640000ull;

bool maskBit(const uint8_t* mask, size_t i) { return (mask[i / 8] >> (i % 8)) & 1u; }

// The set positions of each rank's shard, relative to the shard's start.
std::vector<std::vector<size_t>> shardPositions(const uint8_t* mask, size_t shard, int nranks) {
  std::vector<std::vector<size_t>> positions(static_cast<size_t>(nranks), std::vector<size_t>());
  for (size_t r = 0; r < positions.size(); ++r) {
    for (size_t i = 0; i < shard; ++i) {
      if (maskBit(mask, r * shard + i)) positions[r].push_back(i);
    }
  }
  return positions;
}

// FNV-1a over the mask's bits (those past the last element ignored) and the call's shape.
uint64_t maskHash(const uint8_t* mask, size_t bits, const MaskedCall& call) {
  uint64_t h = 1469598103934665603ull;
  auto add = [&h](uint64_t byte) { h = (h ^ byte) * 1099511628211ull; };
  for (size_t i = 0; i < bits / 8; ++i) add(mask[i]);
  if (bits % 8) add(mask[bits / 8] & ((1u << (bits % 8)) - 1u));
  add(call.reduce);
  add(uint64_t(call.dtype));
  return h;
}

// Every rank's hash of its mask, compared on every rank, so that all refuse together.
void agreeMask(coll::Context& context, const MaskedCall& call, size_t bits) {
  const uint64_t mine = maskHash(call.mask, bits, call);
  const size_t n = context.group.ranks.size();
  std::vector<uint64_t> all(n);
  coll::allgather(context, &mine, all.data(), sizeof mine, qcclUint8, false,
                  coll::GatherMode::Decoded);
  for (size_t r = 0; r < n; ++r) {
    if (all[r] != mine) {
      throwError(qcclInvalidUsage,
                 "masked %s: rank %zu's mask differs from rank %d's (every rank must pass the "
                 "same mask); nothing written",
                 call.reduce ? "reduce-scatter" : "all-gather", r, context.group.me);
    }
  }
}

// Copies the elements at `positions` (of `width` bytes) between a strided whole and a compact run.
void compact(const void* whole, const std::vector<size_t>& positions, size_t width, void* out) {
  for (size_t j = 0; j < positions.size(); ++j) {
    std::memcpy(static_cast<uint8_t*>(out) + j * width,
                static_cast<const uint8_t*>(whole) + positions[j] * width, width);
  }
}
void expand(const void* packed, const std::vector<size_t>& positions, size_t width, void* whole) {
  for (size_t j = 0; j < positions.size(); ++j) {
    std::memcpy(static_cast<uint8_t*>(whole) + positions[j] * width,
                static_cast<const uint8_t*>(packed) + j * width, width);
  }
}

// The residuals of one compact run, for the codec's encode: the masked coordinates of the key's
// whole-buffer residual, gathered before and written back after.
class CompactResiduals : public coll::Residuals {
 public:
  CompactResiduals(std::vector<uint8_t>& run, qcclDataType_t dtype) : run_(run), dtype_(dtype) {}
  void* get(Slot, size_t) override { return run_.data(); }
  qcclDataType_t dtype() const override { return dtype_; }

 private:
  std::vector<uint8_t>& run_;
  qcclDataType_t dtype_;
};

class MaskedRun {
 public:
  MaskedRun(qcclComm& comm, const MaskedCall& call, const CallPlan& plan, coll::Context& context)
      : call_(call),
        context_(context),
        compressed_(plan.compressed()),
        n_(size_t(comm.nranks)),
        width_(coll::dataTypeSize(call.dtype)),
        positions_(shardPositions(call.mask, call.shard, comm.nranks)) {
    if (plan.errorFeedback) {
      whole_ = &comm.ef->forCall(plan.efKey, plan.efSignature ^ kMaskedSignature, *context.executor,
                                 plan.efKeyDerived);
      context.efDecay = plan.efDecay;
    }
    for (const auto& p : positions_) blockBytes_ = std::max(blockBytes_, bytesOf(p.size()));
  }

  size_t blockBytes() const { return blockBytes_; }

  // The values of shard `r` of `whole` (its residual at the same coordinates) into block `out`.
  void encode(const void* whole, size_t r, uint8_t* out) {
    const std::vector<size_t>& p = positions_[r];
    const size_t base = call_.reduce ? r * call_.shard : 0;
    std::vector<uint8_t> values(p.size() * width_);
    compact(static_cast<const uint8_t*>(whole) + base * width_, p, width_, values.data());
    if (!compressed_) {
      std::memcpy(out, values.data(), values.size());
      return;
    }
    if (p.empty()) return;
    std::vector<uint8_t> run;
    CompactResiduals residuals(run, whole_ ? whole_->dtype() : qcclFloat32);
    uint8_t* slot = nullptr;
    size_t rw = 0;
    if (whole_) {
      rw = coll::dataTypeSize(whole_->dtype());
      slot = static_cast<uint8_t*>(
          whole_->get(coll::Residuals::kWorker, call_.reduce ? n_ * call_.shard : call_.shard));
      run.resize(p.size() * rw);
      compact(slot + base * rw, p, rw, run.data());
    }
    context_.residuals = whole_ ? &residuals : nullptr;
    coll::encodeChunk(context_, values.data(), p.size(), call_.dtype,
                      {coll::Residuals::kWorker, p.size(), 0}, base, out, bytesOf(p.size()));
    context_.residuals = nullptr;
    if (whole_) expand(run.data(), p, rw, slot + base * rw);
  }

  // Reduce-scatter: every rank's block of this rank's shard (`blocks`, in rank order) reduced
  // into the shard's set positions of `recv`: exact blocks as the dense exact path reduces
  // (coll::Accumulator), encoded ones decoded into an fp32 sum in rank order, the own share in
  // full precision as the dense reduce-scatter adds it (Avg then divides).
  void reduce(const uint8_t* blocks, size_t me, void* recv) {
    const size_t k = positions_[me].size(), bytes = bytesOf(k);
    std::vector<uint8_t> out(k * width_);
    if (!compressed_) {
      coll::Buffer storage(coll::hostAllocator());
      coll::Accumulator sum(call_.dtype, call_.op, k, storage);
      for (size_t s = 0; s < n_; ++s) sum.add(blocks + s * blockBytes_);
      sum.finish(int(n_), out.data());
    } else {
      std::vector<uint8_t> own(k * width_);
      compact(static_cast<const uint8_t*>(call_.send) + me * call_.shard * width_, positions_[me],
              width_, own.data());
      std::vector<float> sum(k, 0.0f);
      for (size_t s = 0; s < n_ && k; ++s) {
        const uint8_t* block = blocks + s * blockBytes_;
        if (s == me) {
          coll::addAsFloat32(own.data(), call_.dtype, k, sum.data());
        } else if (coll::acceptChunk(context_, block, bytes, k, int(s))) {
          coll::decodeChunk(context_, block, bytes, k, call_.dtype, qcclFloat32, sum.data(), true);
        }
      }
      coll::throwIfUsageError(context_);
      if (call_.op == qcclAvg) {
        for (float& v : sum) v /= float(n_);
      }
      coll::fromFloat32(sum.data(), k, call_.dtype, out.data());
    }
    expand(out.data(), positions_[me], width_, recv);
  }

  // All-gather: whether rank r's block may be decoded (a mismatch is recorded in the context).
  void check(const uint8_t* block, size_t r) {
    const size_t k = positions_[r].size();
    if (compressed_ && k) coll::acceptChunk(context_, block, bytesOf(k), k, int(r));
  }

  // All-gather: rank r's checked block into shard r's set positions of `recv`, decoded (or as
  // sent, exact).
  void place(const uint8_t* block, size_t r, void* recv) {
    const size_t k = positions_[r].size();
    uint8_t* shard = static_cast<uint8_t*>(recv) + r * call_.shard * width_;
    if (!compressed_) return expand(block, positions_[r], width_, shard);
    std::vector<uint8_t> out(k * width_);
    if (k) {
      coll::decodeChunk(context_, block, bytesOf(k), k, call_.dtype, call_.dtype, out.data(),
                        false);
    }
    expand(out.data(), positions_[r], width_, shard);
  }

 private:
  size_t bytesOf(size_t k) const {
    if (!compressed_) return k * width_;
    return k == 0 ? 0 : coll::chunkBytes(context_, k, call_.dtype);
  }

  const MaskedCall& call_;
  coll::Context& context_;
  bool compressed_;
  size_t n_, width_;
  std::vector<std::vector<size_t>> positions_;
  coll::Residuals* whole_ = nullptr;
  size_t blockBytes_ = 0;
};

void checkMaskedCall(const qcclComm& comm, const MaskedCall& call) {
  if (call.shard != 0 && call.mask == nullptr) {
    throwError(qcclInvalidArgument, "masked call: mask is NULL");
  }
  if (!compressibleDtype(call.dtype)) {
    throwError(qcclInvalidArgument, "masked call: dtype %d is not fp32, bf16 or fp16",
               int(call.dtype));
  }
  if (call.reduce && call.op != qcclSum && call.op != qcclAvg) {
    throwError(qcclInvalidArgument, "masked reduce-scatter: op %d is not qcclSum or qcclAvg",
               int(call.op));
  }
  const unsigned flags = call.config ? call.config->flags : 0u;
  if (flags & (QCCL_CALL_DELTA | QCCL_CALL_KEEP_OWN_SHARD)) {
    throwError(qcclInvalidArgument,
               "masked call: QCCL_CALL_DELTA and QCCL_CALL_KEEP_OWN_SHARD do not apply (every "
               "rank decodes every block; the values written are the mask's only)");
  }
  if (call.stream != nullptr) {
    throwError(qcclInvalidUsage, "masked calls take host buffers and a NULL stream (rank %d)",
               comm.rank);
  }
}

}  // namespace

void runMasked(qcclComm& comm, const MaskedCall& call) {
  checkMaskedCall(comm, call);
  const CollectiveKind kind =
      call.reduce ? CollectiveKind::ReduceScatter : CollectiveKind::AllGather;
  const CallPlan plan = planCall(
      comm.settings, {comm.nranks, comm.hierGroupSize},
      {kind, call.send, call.recv, call.shard, call.dtype, call.op, call.stream, call.config});
  guarded(comm, [&] {
    const CallRoute route = routeCall(comm, call.send, call.recv, call.stream);
    if (route.route != Route::Tagged) {
      throwError(qcclInvalidUsage, "masked calls take host buffers");
    }
    if (call.shard == 0) return;
    coll::Context context = makeContext(comm, route, plan.codec, nullptr);
    const size_t n = size_t(comm.nranks), me = size_t(comm.rank);
    agreeMask(context, call, n * call.shard);
    MaskedRun run(comm, call, plan, context);
    const size_t block = run.blockBytes();
    std::vector<uint8_t> blocks(n * block), received(n * block);
    if (call.reduce) {
      // Each rank's block of shard r goes to r, which reduces every rank's, its own included, in
      // rank order: one result whatever the transport's timing. The own share is not encoded.
      for (size_t r = 0; r < n; ++r) {
        if (r != me || !plan.compressed()) run.encode(call.send, r, blocks.data() + r * block);
      }
      if (block) coll::alltoall(context, blocks.data(), received.data(), block, qcclUint8);
      run.reduce(received.data(), me, call.recv);
    } else {
      // Every rank decodes every block, its own too: the same values on every rank. All are
      // checked before any is written.
      run.encode(call.send, me, blocks.data());
      if (block) {
        coll::allgather(context, blocks.data(), received.data(), block, qcclUint8, false,
                        coll::GatherMode::Decoded);
      }
      for (size_t r = 0; r < n; ++r) run.check(received.data() + r * block, r);
      coll::throwIfUsageError(context);
      for (size_t r = 0; r < n; ++r) run.place(received.data() + r * block, r, call.recv);
    }
    if (comm.ef) comm.ef->settle(true);
  });
}

}  // namespace qccl
