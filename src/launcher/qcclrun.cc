// qcclrun -n N [--timeout SECONDS] [--] program [args...]
//
// Starts N local ranks of program without MPI. The launcher hosts the bootstrap root
// (qcclGetUniqueId) and hands each rank QCCL_RANK, QCCL_WORLD_SIZE, QCCL_LOCAL_RANK,
// QCCL_LOCAL_SIZE and QCCL_COMM_ID, which qcclCommInitFromEnv reads. Each line a rank prints
// comes out prefixed with "[rank] ". Exits 0 when every rank exits 0, else with the first failing
// rank's code (128 + signal for a signal). When a rank fails, the others get QCCL_TIMEOUT plus
// ten seconds to notice and exit before they are killed.
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "src/bootstrap/unique_id.h"
#include "src/comm/unique_id_source.h"
#include "src/common/error.h"

namespace {

struct Rank {
  pid_t pid = -1;
  int out = -1;  // read ends of the rank's stdout and stderr pipes
  int err = -1;
  std::string outLine, errLine;
  bool running = false;
  int exitCode = 0;
};

[[noreturn]] void usage(const char* message) {
  std::fprintf(stderr,
               "qcclrun: %s\nusage: qcclrun -n N [--timeout SECONDS] [--] program [args...]\n",
               message);
  std::exit(2);
}

volatile sig_atomic_t interrupted = 0;
void onSignal(int sig) { interrupted = sig; }

// Writes the complete lines of buffer with the rank prefix; keeps the unfinished tail.
void flushLines(std::string& buffer, int rank, FILE* to, bool all) {
  size_t start = 0;
  for (size_t nl; (nl = buffer.find('\n', start)) != std::string::npos; start = nl + 1) {
    std::fprintf(to, "[%d] %.*s\n", rank, int(nl - start), buffer.data() + start);
  }
  buffer.erase(0, start);
  if (all && !buffer.empty()) {
    std::fprintf(to, "[%d] %s\n", rank, buffer.c_str());
    buffer.clear();
  }
  std::fflush(to);
}

bool drain(int& fd, std::string& buffer, int rank, FILE* to) {
  char chunk[4096];
  const ssize_t n = read(fd, chunk, sizeof chunk);
  if (n > 0) {
    buffer.append(chunk, size_t(n));
    flushLines(buffer, rank, to, false);
    return true;
  }
  if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
    flushLines(buffer, rank, to, true);
    close(fd);
    fd = -1;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  int n = 0;
  long timeoutSeconds = 0;
  int first = 1;
  for (; first < argc; ++first) {
    const std::string a = argv[first];
    if (a == "-n" && first + 1 < argc) {
      n = std::atoi(argv[++first]);
    } else if (a == "--timeout" && first + 1 < argc) {
      timeoutSeconds = std::atol(argv[++first]);
    } else if (a == "--") {
      ++first;
      break;
    } else if (a.rfind("-", 0) == 0) {
      usage(("unknown option " + a).c_str());
    } else {
      break;
    }
  }
  if (n < 1) usage("-n N (N >= 1) is required");
  if (first >= argc) usage("no program given");

  std::string idHex;
  try {
    idHex = qccl::bootstrap::uniqueIdToHex(qccl::newUniqueId());
  } catch (const qccl::Error& e) {
    std::fprintf(stderr, "qcclrun: %s\n", e.what());
    return 1;
  }
  signal(SIGINT, onSignal);
  signal(SIGTERM, onSignal);
  signal(SIGPIPE, SIG_IGN);

  std::vector<Rank> ranks(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r) {
    int out[2], err[2];
    if (pipe(out) != 0 || pipe(err) != 0) {
      std::perror("qcclrun: pipe");
      return 1;
    }
    const pid_t pid = fork();
    if (pid == 0) {
      dup2(out[1], STDOUT_FILENO);
      dup2(err[1], STDERR_FILENO);
      close(out[0]);
      close(out[1]);
      close(err[0]);
      close(err[1]);
      setenv("QCCL_RANK", std::to_string(r).c_str(), 1);
      setenv("QCCL_WORLD_SIZE", std::to_string(n).c_str(), 1);
      setenv("QCCL_LOCAL_RANK", std::to_string(r).c_str(), 1);
      setenv("QCCL_LOCAL_SIZE", std::to_string(n).c_str(), 1);
      setenv("QCCL_COMM_ID", idHex.c_str(), 1);
      execvp(argv[first], argv + first);
      std::fprintf(stderr, "qcclrun: cannot run %s: %s\n", argv[first], std::strerror(errno));
      _exit(127);
    }
    close(out[1]);
    close(err[1]);
    ranks[size_t(r)].pid = pid;
    ranks[size_t(r)].out = out[0];
    ranks[size_t(r)].err = err[0];
    ranks[size_t(r)].running = true;
  }

  const char* timeoutEnv = std::getenv("QCCL_TIMEOUT");
  const long grace = (timeoutEnv ? std::atol(timeoutEnv) : 300) + 10;
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  auto killAt = Clock::time_point::max();
  int exitCode = 0;
  int running = n;
  bool killed = false;
  while (running > 0 || std::any_of(ranks.begin(), ranks.end(),
                                    [](const Rank& r) { return r.out >= 0 || r.err >= 0; })) {
    std::vector<pollfd> fds;
    std::vector<std::pair<int, bool>> owners;  // rank, is stderr
    for (int r = 0; r < n; ++r) {
      if (ranks[size_t(r)].out >= 0) {
        fds.push_back({ranks[size_t(r)].out, POLLIN, 0});
        owners.push_back({r, false});
      }
      if (ranks[size_t(r)].err >= 0) {
        fds.push_back({ranks[size_t(r)].err, POLLIN, 0});
        owners.push_back({r, true});
      }
    }
    if (!fds.empty()) poll(fds.data(), fds.size(), 100);
    for (size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      Rank& rank = ranks[size_t(owners[i].first)];
      if (owners[i].second) {
        drain(rank.err, rank.errLine, owners[i].first, stderr);
      } else {
        drain(rank.out, rank.outLine, owners[i].first, stdout);
      }
    }
    if (fds.empty() && running > 0) usleep(100000);
    for (int r = 0; r < n; ++r) {
      Rank& rank = ranks[size_t(r)];
      if (!rank.running) continue;
      int status = 0;
      if (waitpid(rank.pid, &status, WNOHANG) != rank.pid) continue;
      rank.running = false;
      --running;
      rank.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      if (rank.exitCode != 0 && exitCode == 0) {
        exitCode = rank.exitCode;
        std::fprintf(stderr,
                     "qcclrun: rank %d exited with %d; waiting up to %ld s for the others\n", r,
                     exitCode, grace);
        killAt = Clock::now() + std::chrono::seconds(grace);
      }
    }
    const bool overall =
        timeoutSeconds > 0 && Clock::now() - start > std::chrono::seconds(timeoutSeconds);
    if (!killed && running > 0 && (interrupted || Clock::now() > killAt || overall)) {
      std::fprintf(stderr, "qcclrun: %s; stopping the remaining ranks\n",
                   interrupted ? "interrupted" : "ranks still running after the grace period");
      for (Rank& rank : ranks) {
        if (rank.running) kill(rank.pid, SIGTERM);
      }
      killed = true;
      killAt = Clock::now() + std::chrono::seconds(5);
      if (exitCode == 0) exitCode = interrupted ? 128 + interrupted : 124;
    } else if (killed && running > 0 && Clock::now() > killAt) {
      for (Rank& rank : ranks) {
        if (rank.running) kill(rank.pid, SIGKILL);
      }
    }
  }
  return exitCode;
}
