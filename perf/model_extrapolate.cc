// The cost model (src/comm/cost_model.h) carried to 8-GPU nodes, where it cannot be measured here:
// hierarchical allreduce of an fp32 gradient, exact inside a node over NVLink, and across N nodes
// by each GPU on its own 1/8 of the buffer through its own NIC (one rail per GPU), exact or
// compressed. Every input is an assumption, printed with the table (docs/PERFORMANCE.md):
//
//   model_extrapolate
#include <cstdio>
#include <initializer_list>
#include <string>

#include "codecs/codec_spec.h"
#include "src/comm/cost_model.h"

namespace {

using qccl::CollectiveKind;

struct Network {
  const char* name;
  double latency;         // per exchange with every peer at once
  double bytesPerSecond;  // per GPU's NIC, each direction
};

// One GPU's codec and reduction rates, elements per second: half of what the copy bandwidth
// measured on an H200 (4.3 TB/s read + write) allows for the bytes each kernel moves: encode with
// EF 13 B/element (fp32 in, residual in and out, ~1 B out), decode-accumulate 9 B, fp32 reduce
// 12 B, copy 8 B.
constexpr double kHbm = 4.3e12, kEfficiency = 0.5;
const qccl::HostRates kGpu{kEfficiency * kHbm / 13, kEfficiency* kHbm / 9, kEfficiency* kHbm / 12,
                           kEfficiency* kHbm / 8};
constexpr double kNvlinkBytesPerSecond = 360e9;  // per GPU, each direction (NVLink 4: 450 GB/s)
constexpr double kNvlinkLatency = 10e-6;

qccl::CostInputs across(int nodes, const Network& net) {
  qccl::CostInputs in;
  in.nranks = nodes;
  in.link.nranks = nodes;
  for (size_t k = 0; k < qccl::LinkCurve::kPoints; ++k) {
    in.link.seconds[k] = net.latency + double(qccl::LinkCurve::probeBytes(nodes, k)) *
                                           double(nodes - 1) / net.bytesPerSecond;
  }
  in.rates = kGpu;
  in.segmentElements = 1 << 18;
  return in;
}

}  // namespace

int main() {
  constexpr int kGpusPerNode = 8;
  const Network networks[] = {{"400 Gb/s InfiniBand", 5e-6, 50e9},
                              {"100 Gb/s Ethernet", 20e-6, 12.5e9}};
  std::printf(
      "Assumed: GPU encode+EF %.0f, decode-accumulate %.0f, reduce %.0f G elements/s; "
      "NVLink %.0f GB/s per GPU per direction, %.0f us per exchange\n\n",
      kGpu.encode / 1e9, kGpu.decode / 1e9, kGpu.reduce / 1e9, kNvlinkBytesPerSecond / 1e9,
      kNvlinkLatency * 1e6);
  std::printf(
      "| network | nodes | buffer | exact ms | bf16 | fp8e4m3 | nvfp4 | fp8 inter-node "
      "share |\n|---|---|---|---|---|---|---|---|\n");
  for (const Network& net : networks) {
    for (int nodes : {2, 8, 32}) {
      for (size_t mib : {size_t(16), size_t(256), size_t(1024)}) {
        const size_t count = (mib << 20) / 4, shard = count / kGpusPerNode;
        // Inside the node: an exact reduce-scatter and an allgather over NVLink, the same for
        // every codec.
        const double nvlink =
            2 * (kNvlinkLatency + double(count - shard) * 4 / kNvlinkBytesPerSecond);
        const qccl::CostInputs in = across(nodes, net);
        const double exact =
            nvlink + qccl::predictExact(in, CollectiveKind::AllReduce, shard, qcclFloat32).seconds;
        std::printf("| %s | %d | %zu MiB | %.2f |", net.name, nodes, mib, exact * 1e3);
        double fp8Inter = 0, fp8 = 0;
        for (const char* name : {"bf16", "fp8e4m3", "nvfp4"}) {
          const double inter =
              qccl::predictCompressed(in, CollectiveKind::AllReduce, shard, qcclFloat32,
                                      qccl::codec::parseCodecSpec(name))
                  .seconds;
          std::printf(" %.2fx |", exact / (nvlink + inter));
          if (std::string(name) == "fp8e4m3") {
            fp8Inter = inter;
            fp8 = nvlink + inter;
          }
        }
        std::printf(" %.0f%% |\n", 100 * fp8Inter / fp8);
      }
    }
  }
  return 0;
}
