// Point-to-point in the `qccl` backend: send / recv (isend / irecv) post qccl's non-blocking
// messages and complete in the background (p2p_completer.h); the all-to-all forms, uneven splits
// included, are one group of messages on the ordered worker; monitored_barrier is gloo's: rank 0
// hears from every rank within the timeout or names those it did not hear from. CUDA tensors are
// staged through CPU copies (docs/INTEGRATION.md).
#include <memory>
#include <numeric>
#include <string>

#include "qccl_backend.h"
#include "qccl_work.h"
#include "tensor_types.h"

namespace qccl::torch_backend {

namespace {

size_t count(const at::Tensor& t) { return size_t(t.numel()); }

uint32_t messageTag(int tag) {
  TORCH_CHECK(tag >= 0 && tag < (1 << 24), "qccl backend: tag ", tag,
              " is out of range (0 to 2^24 - 1)");
  return uint32_t(tag);
}

// The tags of monitored_barrier's messages: above what messageTag lets users pick.
constexpr uint32_t kBarrierArrivedTag = 0xFFFFFE, kBarrierReleasedTag = 0xFFFFFD;

}  // namespace

c10::intrusive_ptr<c10d::Work> QcclBackend::message(bool send, at::Tensor tensor, int peer,
                                                    int tag) {
  checkTensors({tensor}, send ? "send" : "recv");
  const bool anySource = !send && peer == kAnySource;
  TORCH_CHECK(anySource || (peer >= 0 && peer < getSize()),
              "qccl backend: ", send ? "send to" : "recv from", " rank ", peer,
              ": out of range for ", getSize(), " ranks");
  const uint32_t t = messageTag(tag);
  at::Tensor host = send ? hostCopy(tensor)
                         : (tensor.is_cpu() && tensor.is_contiguous()
                                ? tensor
                                : at::empty_like(tensor, at::kCPU).contiguous());
  qcclRequest_t request = nullptr;
  // Written by qccl when the receive completes, before the completer calls back.
  auto source = std::make_shared<int>(peer);
  if (send) {
    check(qcclIsend(host.data_ptr(), count(host), qcclTypeOf(host), peer, t, comm_, &request),
          "qcclIsend");
  } else if (anySource) {
    check(qcclIrecvAnySource(host.data_ptr(), count(host), qcclTypeOf(host), t, comm_, source.get(),
                             &request),
          "qcclIrecvAnySource");
  } else {
    check(qcclIrecv(host.data_ptr(), count(host), qcclTypeOf(host), peer, t, comm_, &request),
          "qcclIrecv");
  }
  auto work = c10::make_intrusive<QcclWork>(getRank(),
                                            send        ? c10d::OpType::SEND
                                            : anySource ? c10d::OpType::RECVANYSOURCE
                                                        : c10d::OpType::RECV,
                                            std::vector<at::Tensor>{tensor});
  const std::string what = std::string(send ? "send to" : "recv from") +
                           (anySource ? " any rank" : " rank " + std::to_string(peer)) + ", tag " +
                           std::to_string(tag);
  completer_->track(request, what,
                    [work, tensor, host, send, source](std::exception_ptr error) mutable {
                      if (!error && !send) {
                        try {
                          writeBack(host, tensor);
                        } catch (...) {
                          error = std::current_exception();
                        }
                        work->setSourceRank(*source);
                      }
                      work->finish(error);
                    });
  return work;
}

c10::intrusive_ptr<c10d::Work> QcclBackend::send(std::vector<at::Tensor>& tensors, int dstRank,
                                                 int tag) {
  TORCH_CHECK(tensors.size() == 1, "qccl backend: send takes one tensor");
  return message(true, tensors[0], dstRank, tag);
}

c10::intrusive_ptr<c10d::Work> QcclBackend::recv(std::vector<at::Tensor>& tensors, int srcRank,
                                                 int tag) {
  TORCH_CHECK(tensors.size() == 1, "qccl backend: recv takes one tensor");
  return message(false, tensors[0], srcRank, tag);
}

c10::intrusive_ptr<c10d::Work> QcclBackend::recvAnysource(std::vector<at::Tensor>& tensors,
                                                          int tag) {
  TORCH_CHECK(tensors.size() == 1, "qccl backend: recv takes one tensor");
  return message(false, tensors[0], kAnySource, tag);
}

void QcclBackend::exchangeBlocks(const std::vector<at::Tensor>& out,
                                 const std::vector<at::Tensor>& in) {
  check(qcclGroupStart(), "qcclGroupStart");
  for (int p = 0; p < getSize(); ++p) {
    const at::Tensor& o = out[size_t(p)];
    const at::Tensor& i = in[size_t(p)];
    qcclSend(i.data_ptr(), count(i), qcclTypeOf(i), p, comm_, nullptr);
    qcclRecv(o.data_ptr(), count(o), qcclTypeOf(o), p, comm_, nullptr);
  }
  check(qcclGroupEnd(), "qcclGroupEnd");
}

c10::intrusive_ptr<c10d::Work> QcclBackend::alltoall(std::vector<at::Tensor>& outputs,
                                                     std::vector<at::Tensor>& inputs,
                                                     const c10d::AllToAllOptions&) {
  TORCH_CHECK(outputs.size() == size_t(getSize()) && inputs.size() == size_t(getSize()),
              "qccl backend: all_to_all takes one input and one output tensor per rank");
  checkTensors(inputs, outputs, "all_to_all");
  std::vector<at::Tensor> in, out;
  for (const at::Tensor& t : inputs) in.push_back(hostCopy(t));
  for (const at::Tensor& t : outputs) out.push_back(at::empty_like(t, at::kCPU).contiguous());
  return enqueue(c10d::OpType::ALLTOALL, outputs, [this, in, out, outputs]() mutable {
    exchangeBlocks(out, in);
    for (size_t p = 0; p < outputs.size(); ++p) writeBack(out[p], outputs[p]);
  });
}

c10::intrusive_ptr<c10d::Work> QcclBackend::alltoall_base(at::Tensor& output, at::Tensor& input,
                                                          std::vector<int64_t>& outputSplits,
                                                          std::vector<int64_t>& inputSplits,
                                                          const c10d::AllToAllOptions&) {
  checkTensors({input, output}, "all_to_all_single");
  TORCH_CHECK(input.scalar_type() == output.scalar_type(),
              "qccl backend: all_to_all_single: input and output of one type");
  const int64_t n = getSize();
  // Splits are rows of the first dimension; none given: equal ones.
  auto rows = [n](const at::Tensor& t, const std::vector<int64_t>& splits, const char* what) {
    if (splits.empty()) {
      TORCH_CHECK(t.dim() > 0 && t.size(0) % n == 0, "qccl backend: all_to_all_single: the ", what,
                  "'s first dimension must divide by the world size without splits");
      return std::vector<int64_t>(size_t(n), t.dim() > 0 ? t.size(0) / n : 0);
    }
    TORCH_CHECK(int64_t(splits.size()) == n, "qccl backend: all_to_all_single: ", what,
                " splits must have one entry per rank");
    TORCH_CHECK(std::accumulate(splits.begin(), splits.end(), int64_t(0)) == t.size(0),
                "qccl backend: all_to_all_single: ", what,
                " splits must sum to its first "
                "dimension");
    return splits;
  };
  if (outputSplits.empty() && inputSplits.empty() && input.numel() == output.numel() &&
      input.numel() % n == 0) {
    // Even blocks: qccl's all-to-all, on the caller's stream for CUDA tensors.
    return launch(c10d::OpType::ALLTOALL_BASE, {output}, input.device(),
                  [this, output, input](cudaStream_t stream) mutable {
                    at::Tensor in = input.contiguous(), out = output.contiguous();
                    check(qcclAlltoAll(in.data_ptr(), out.data_ptr(), count(in) / size_t(getSize()),
                                       qcclTypeOf(in), comm_, stream),
                          "qcclAlltoAll");
                    writeBack(out, output);
                  });
  }
  const std::vector<int64_t> outRows = rows(output, outputSplits, "output");
  const std::vector<int64_t> inRows = rows(input, inputSplits, "input");
  at::Tensor in = hostCopy(input);
  at::Tensor out = output.is_cpu() && output.is_contiguous()
                       ? output
                       : at::empty_like(output, at::kCPU).contiguous();
  return enqueue(c10d::OpType::ALLTOALL_BASE, {output},
                 [this, in, out, output, inRows, outRows]() mutable {
                   std::vector<at::Tensor> ins, outs;
                   int64_t i = 0, o = 0;
                   for (size_t p = 0; p < inRows.size(); ++p) {
                     ins.push_back(in.narrow(0, i, inRows[p]));
                     outs.push_back(out.narrow(0, o, outRows[p]));
                     i += inRows[p];
                     o += outRows[p];
                   }
                   exchangeBlocks(outs, ins);
                   writeBack(out, output);
                 });
}

void QcclBackend::monitoredBarrier(const c10d::BarrierOptions& opts, bool waitAllRanks) {
  const std::chrono::milliseconds timeout =
      opts.timeout.count() >= 0 && opts.timeout != c10d::kUnsetTimeout ? opts.timeout : timeout_;
  const int n = getSize(), me = getRank();
  auto expired = [start = std::chrono::steady_clock::now(), timeout] {
    return std::chrono::steady_clock::now() - start > timeout;
  };
  uint8_t word = 1;
  std::vector<uint8_t> words(size_t(n), 0);
  runInOrder([&] {
    // Posts one message per (other) rank and polls them until the timeout.
    auto exchange = [&](bool send, uint32_t tag, std::vector<int> peers) {
      std::vector<std::pair<int, qcclRequest_t>> open;
      for (int p : peers) {
        qcclRequest_t r = nullptr;
        check(send ? qcclIsend(&word, 1, qcclUint8, p, tag, comm_, &r)
                   : qcclIrecv(&words[size_t(p)], 1, qcclUint8, p, tag, comm_, &r),
              "monitored_barrier");
        open.emplace_back(p, r);
      }
      std::vector<int> missing;
      while (!open.empty()) {
        for (auto it = open.begin(); it != open.end();) {
          int done = 0;
          check(qcclTest(it->second, &done), "monitored_barrier");
          it = done ? open.erase(it) : it + 1;
        }
        if (open.empty()) break;
        if (expired()) {
          for (auto& [p, r] : open) {
            qcclCancel(r);
            missing.push_back(p);
          }
          break;
        }
        std::this_thread::sleep_for(std::chrono::microseconds(100));
      }
      return missing;
    };
    std::vector<int> others;
    for (int p = 0; p < n; ++p) {
      if (p != me) others.push_back(p);
    }
    if (me != 0) {
      const bool late = !exchange(true, kBarrierArrivedTag, {0}).empty() ||
                        !exchange(false, kBarrierReleasedTag, {0}).empty();
      // Worded as gloo's, which callers (and PyTorch's own tests) match.
      TORCH_CHECK(!late, "qccl backend: Rank ", me,
                  " successfully reached monitoredBarrier, but received errors while waiting for "
                  "send/recv from rank 0 (nothing from it in ",
                  timeout.count(), " ms). Please check rank 0 logs for faulty rank.");
      return;
    }
    const std::vector<int> missing = exchange(false, kBarrierArrivedTag, others);
    if (!missing.empty()) {
      std::string ranks;
      for (size_t i = 0; i < (waitAllRanks ? missing.size() : 1); ++i) {
        ranks += (i ? ", " : "") + std::to_string(missing[i]);
      }
      // As gloo words it: rank 0 timed out, and which ranks it was still waiting for.
      TORCH_CHECK(false, "qccl backend: Rank 0 timed out in monitoredBarrier after ",
                  timeout.count(), " ms: ", waitAllRanks ? "Ranks " : "Rank ", ranks,
                  " failed to pass monitoredBarrier in ", timeout.count(), " ms");
    }
    exchange(true, kBarrierReleasedTag, others);
  });
}

}  // namespace qccl::torch_backend
