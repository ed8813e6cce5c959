// Data-parallel training with compressed gradients: softmax regression on a generated data set,
// one shard per rank, the gradient averaged with qcclAllReduce each step. The same training runs
// several times from the same start: exact allreduce, then the codec without error feedback and
// with it, or (--compare) each of several codecs with it. Prints the loss curves and the bytes
// each rank sent per step (rank 0).
//
//   qcclrun -n 4 build/examples/train_softmax [codec] [steps]      (default: sign1, 300)
//   qcclrun -n 4 build/examples/train_softmax --compare int4,sign1,topk0.07+int2/b128 [steps]
#include <qccl/qccl.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace {

constexpr int kClasses = 10, kSamples = 2048, kBatch = 128;
constexpr float kLearningRate = 0.5f;

struct Shard {
  int features;
  std::vector<float> x;  // kSamples x features
  std::vector<int> y;
};

// Gaussian clusters around class centroids shared by every rank; each rank draws its own samples.
Shard makeShard(int rank, int features) {
  std::mt19937 centroidRng(1234);
  std::normal_distribution<float> normal;
  std::vector<float> centroids(size_t(kClasses) * features);
  // The centroids' spread shrinks as sqrt(64 / features): class separation, and so the problem's
  // difficulty, stays that of the 64-feature default.
  const float spread = 0.6f * std::sqrt(64.0f / float(features));
  for (float& c : centroids) c = normal(centroidRng) * spread;
  std::mt19937 rng(77 + unsigned(rank));
  Shard s;
  s.features = features;
  s.x.resize(size_t(kSamples) * features);
  s.y.resize(kSamples);
  for (int i = 0; i < kSamples; ++i) {
    s.y[size_t(i)] = int(rng() % kClasses);
    for (int f = 0; f < features; ++f) {
      s.x[size_t(i) * features + f] =
          centroids[size_t(s.y[size_t(i)]) * features + f] + normal(rng);
    }
  }
  return s;
}

// Cross-entropy of samples [first, first + count) and, when grad is given, its gradient
// (weights kClasses x features, then kClasses biases), averaged over the samples.
double lossAndGradient(const Shard& s, const std::vector<float>& w, int first, int count,
                       std::vector<float>* grad) {
  if (grad) grad->assign(w.size(), 0.0f);
  double loss = 0;
  float logits[kClasses];
  for (int k = 0; k < count; ++k) {
    const int i = (first + k) % kSamples;
    const int features = s.features;
    const float* x = &s.x[size_t(i) * features];
    float top = -1e30f;
    for (int c = 0; c < kClasses; ++c) {
      float z = w[size_t(kClasses) * features + c];
      for (int f = 0; f < features; ++f) z += w[size_t(c) * features + f] * x[f];
      logits[c] = z;
      top = std::max(top, z);
    }
    double norm = 0;
    for (float z : logits) norm += std::exp(double(z - top));
    loss += -(double(logits[s.y[size_t(i)]] - top) - std::log(norm));
    if (!grad) continue;
    for (int c = 0; c < kClasses; ++c) {
      const float p =
          float(std::exp(double(logits[c] - top)) / norm) - (c == s.y[size_t(i)] ? 1.0f : 0.0f);
      for (int f = 0; f < features; ++f)
        (*grad)[size_t(c) * features + f] += p * x[f] / float(count);
      (*grad)[size_t(kClasses) * features + c] += p / float(count);
    }
  }
  return loss / count;
}

void check(qcclResult_t rc, const char* what) {
  if (rc != qcclSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, qcclGetLastError(nullptr));
    std::exit(1);
  }
}

struct Run {
  std::string name;
  std::string codec;  // "" for the exact run
  unsigned flags;
  std::vector<double> losses;  // every 25 steps, from step 0
  double bytesPerStep = 0;     // sent by this rank per gradient allreduce
};

// Trains from zero weights; run.losses gets the loss over all shards every 25 steps.
void train(qcclComm_t comm, const Shard& shard, int steps, uint64_t efKey, Run& run) {
  const size_t params = size_t(kClasses) * shard.features + kClasses;
  std::vector<float> w(params, 0.0f), grad, averaged(params);
  qcclCallConfig_t call = QCCL_CALL_CONFIG_INITIALIZER;
  call.flags = run.flags;
  call.efKey = efKey;  // each run its own residuals
  if (!run.codec.empty()) call.codec = run.codec.c_str();
  uint64_t sentBefore = 0, sentAfter = 0, received = 0, sent = 0;
  for (int step = 0; step <= steps; ++step) {
    if (step % 25 == 0) {  // the loss over all shards
      double local = lossAndGradient(shard, w, 0, kSamples, nullptr), global = 0;
      qcclCallConfig_t exact = QCCL_CALL_CONFIG_INITIALIZER;
      exact.flags = QCCL_CALL_EXACT;
      check(qcclAllReduceEx(&local, &global, 1, qcclFloat64, qcclAvg, comm, nullptr, &exact),
            "loss");
      run.losses.push_back(global);
    }
    if (step == steps) break;
    lossAndGradient(shard, w, step * kBatch, kBatch, &grad);
    check(qcclCommWireBytes(comm, &sentBefore, &received), "qcclCommWireBytes");
    check(qcclAllReduceEx(grad.data(), averaged.data(), params, qcclFloat32, qcclAvg, comm, nullptr,
                          &call),
          "gradient allreduce");
    check(qcclCommWireBytes(comm, &sentAfter, &received), "qcclCommWireBytes");
    sent += sentAfter - sentBefore;
    for (size_t k = 0; k < params; ++k) w[k] -= kLearningRate * averaged[k];
  }
  run.bytesPerStep = steps > 0 ? double(sent) / steps : 0;
}

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> out;
  for (size_t start = 0; start <= list.size();) {
    const size_t comma = std::min(list.find(',', start), list.size());
    out.push_back(list.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  // train_softmax [--features N] [codec] [steps]: exact, the codec without EF, with EF.
  // train_softmax [--features N] --compare c1,c2,... [steps]: exact, then each codec with EF.
  bool compare = false;
  int features = 64;
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--compare") {
      compare = true;
    } else if (arg == "--features" && i + 1 < argc) {
      features = std::atoi(argv[++i]);
    } else {
      positional.push_back(arg);
    }
  }
  const std::string codecs = positional.size() > 0 ? positional[0] : "sign1";
  const int steps = positional.size() > 1 ? std::atoi(positional[1].c_str()) : 300;
  if (features < 1 || steps < 0) {
    std::fprintf(stderr,
                 "usage: train_softmax [--features N] [--compare] CODEC[,CODEC...] [STEPS]\n");
    return 2;
  }
  std::vector<Run> runs = {{"exact", "", QCCL_CALL_EXACT, {}, 0}};
  if (compare) {
    for (const std::string& c : split(codecs)) runs.push_back({c + "+EF", c, 0, {}, 0});
  } else {
    runs.push_back({"no EF", codecs, QCCL_CALL_NO_EF, {}, 0});
    runs.push_back({"with EF", codecs, 0, {}, 0});
  }
  qcclConfig_t config = QCCL_CONFIG_INITIALIZER;
  config.codec = runs[1].codec.c_str();
  config.minBytes = 0;  // the gradient is small (2.6 KB by default): compress it anyway
  qcclComm_t comm;
  check(qcclCommInitFromEnv(&comm, &config), "qcclCommInitFromEnv");
  int rank = 0, nranks = 1;
  qcclCommUserRank(comm, &rank);
  qcclCommCount(comm, &nranks);
  const Shard shard = makeShard(rank, features);
  for (size_t r = 0; r < runs.size(); ++r) train(comm, shard, steps, 100 + r, runs[r]);
  if (rank == 0) {
    std::printf("softmax regression, %d ranks, %d features, %d classes, batch %d per rank\n",
                nranks, features, kClasses, kBatch);
    std::printf("%6s", "step");
    for (const Run& run : runs) std::printf(" %18s", run.name.c_str());
    std::printf("\n");
    for (size_t k = 0; k < runs[0].losses.size(); ++k) {
      std::printf("%6zu", k * 25);
      for (const Run& run : runs) std::printf(" %18.4f", run.losses[k]);
      std::printf("\n");
    }
    std::printf("%6s", "B/step");
    for (const Run& run : runs) std::printf(" %18.0f", run.bytesPerStep);
    std::printf("\n");
  }
  check(qcclCommFinalize(comm), "finalize");
  qcclCommDestroy(comm);
  return 0;
}
