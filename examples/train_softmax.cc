// Data-parallel training with compressed gradients: softmax regression on a generated data set,
// one shard per rank, the gradient averaged with qcclAllReduce each step. The same training runs
// three times from the same start: exact allreduce, the codec without error feedback, and the
// codec with it. Prints the three loss curves (rank 0).
//
//   qcclrun -n 4 build/examples/train_softmax [codec] [steps]      (default: sign1, 300)
#include <qccl/qccl.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace {

constexpr int kFeatures = 64, kClasses = 10, kSamples = 2048, kBatch = 128;
constexpr float kLearningRate = 0.5f;

struct Shard {
  std::vector<float> x;  // kSamples x kFeatures
  std::vector<int> y;
};

// Gaussian clusters around class centroids shared by every rank; each rank draws its own samples.
Shard makeShard(int rank) {
  std::mt19937 centroidRng(1234);
  std::normal_distribution<float> normal;
  std::vector<float> centroids(kClasses * kFeatures);
  for (float& c : centroids) c = normal(centroidRng) * 0.6f;
  std::mt19937 rng(77 + unsigned(rank));
  Shard s;
  s.x.resize(size_t(kSamples) * kFeatures);
  s.y.resize(kSamples);
  for (int i = 0; i < kSamples; ++i) {
    s.y[size_t(i)] = int(rng() % kClasses);
    for (int f = 0; f < kFeatures; ++f) {
      s.x[size_t(i) * kFeatures + f] =
          centroids[size_t(s.y[size_t(i)]) * kFeatures + f] + normal(rng);
    }
  }
  return s;
}

// Cross-entropy of samples [first, first + count) and, when grad is given, its gradient
// (weights kClasses x kFeatures, then kClasses biases), averaged over the samples.
double lossAndGradient(const Shard& s, const std::vector<float>& w, int first, int count,
                       std::vector<float>* grad) {
  if (grad) grad->assign(w.size(), 0.0f);
  double loss = 0;
  float logits[kClasses];
  for (int k = 0; k < count; ++k) {
    const int i = (first + k) % kSamples;
    const float* x = &s.x[size_t(i) * kFeatures];
    float top = -1e30f;
    for (int c = 0; c < kClasses; ++c) {
      float z = w[size_t(kClasses) * kFeatures + c];
      for (int f = 0; f < kFeatures; ++f) z += w[size_t(c) * kFeatures + f] * x[f];
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
      for (int f = 0; f < kFeatures; ++f)
        (*grad)[size_t(c) * kFeatures + f] += p * x[f] / float(count);
      (*grad)[size_t(kClasses) * kFeatures + c] += p / float(count);
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

}  // namespace

int main(int argc, char** argv) {
  const std::string codec = argc > 1 ? argv[1] : "sign1";
  const int steps = argc > 2 ? std::atoi(argv[2]) : 300;
  qcclConfig_t config = QCCL_CONFIG_INITIALIZER;
  config.codec = codec.c_str();
  config.minBytes = 0;  // the gradient is small (2.6 KB): compress it anyway
  qcclComm_t comm;
  check(qcclCommInitFromEnv(&comm, &config), "qcclCommInitFromEnv");
  int rank = 0, nranks = 1;
  qcclCommUserRank(comm, &rank);
  qcclCommCount(comm, &nranks);
  const Shard shard = makeShard(rank);

  struct Run {
    const char* name;
    unsigned flags;
    std::vector<float> w;
    std::vector<double> losses;
  };
  std::vector<Run> runs = {{"exact", QCCL_CALL_EXACT, {}, {}},
                           {"no EF", QCCL_CALL_NO_EF, {}, {}},
                           {"with EF", 0, {}, {}}};
  const size_t params = size_t(kClasses) * kFeatures + kClasses;
  for (size_t r = 0; r < runs.size(); ++r) {
    Run& run = runs[r];
    run.w.assign(params, 0.0f);
    qcclCallConfig_t call = QCCL_CALL_CONFIG_INITIALIZER;
    call.flags = run.flags;
    call.efKey = 100 + r;  // each run its own residuals
    std::vector<float> grad, averaged(params);
    for (int step = 0; step <= steps; ++step) {
      if (step % 25 == 0) {  // the loss over all shards
        double local = lossAndGradient(shard, run.w, 0, kSamples, nullptr), global = 0;
        qcclCallConfig_t exact = QCCL_CALL_CONFIG_INITIALIZER;
        exact.flags = QCCL_CALL_EXACT;
        check(qcclAllReduceEx(&local, &global, 1, qcclFloat64, qcclAvg, comm, nullptr, &exact),
              "loss");
        run.losses.push_back(global);
      }
      if (step == steps) break;
      lossAndGradient(shard, run.w, step * kBatch, kBatch, &grad);
      check(qcclAllReduceEx(grad.data(), averaged.data(), params, qcclFloat32, qcclAvg, comm,
                            nullptr, &call),
            "gradient allreduce");
      for (size_t k = 0; k < params; ++k) run.w[k] -= kLearningRate * averaged[k];
    }
  }
  if (rank == 0) {
    std::printf(
        "softmax regression, %d ranks, %d features, %d classes, batch %d per rank, codec %s\n",
        nranks, kFeatures, kClasses, kBatch, codec.c_str());
    std::printf("%6s %12s %12s %12s\n", "step", runs[0].name, runs[1].name, runs[2].name);
    for (size_t k = 0; k < runs[0].losses.size(); ++k) {
      std::printf("%6zu %12.4f %12.4f %12.4f\n", k * 25, runs[0].losses[k], runs[1].losses[k],
                  runs[2].losses[k]);
    }
  }
  check(qcclCommFinalize(comm), "finalize");
  qcclCommDestroy(comm);
  return 0;
}
