#include "src/common/log.h"

#include <strings.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "src/common/host_name.h"

namespace qccl {

namespace {

struct LogSettings {
  LogLevel level = LogLevel::None;
  uint32_t subsys = kLogInit | kLogEnv;  // NCCL's default mask, plus ENV
  FILE* file = stderr;
};

uint32_t subsysBit(const std::string& name) {
  static const struct {
    const char* name;
    uint32_t bit;
  } kNames[] = {{"INIT", kLogInit},
                {"BOOTSTRAP", kLogBootstrap},
                {"TRANSPORT", kLogTransport},
                {"COLL", kLogColl},
                {"EF", kLogEf},
                {"ENV", kLogEnv},
                {"ALL", kLogAll}};
  for (const auto& n : kNames) {
    if (strcasecmp(name.c_str(), n.name) == 0) return n.bit;
  }
  return 0;
}

// QCCL_DEBUG_FILE with %h (hostname) and %p (pid) replaced.
FILE* openLogFile(const char* pattern) {
  std::string path;
  const std::string host = hostName();
  for (const char* p = pattern; *p; ++p) {
    if (p[0] == '%' && p[1] == 'h') {
      path += host;
      ++p;
    } else if (p[0] == '%' && p[1] == 'p') {
      path += std::to_string(getpid());
      ++p;
    } else {
      path += *p;
    }
  }
  FILE* f = std::fopen(path.c_str(), "w");
  return f ? f : stderr;
}

const LogSettings& settings() {
  static const LogSettings s = [] {
    LogSettings r;
    if (const char* level = std::getenv("QCCL_DEBUG")) {
      if (strcasecmp(level, "VERSION") == 0) r.level = LogLevel::Version;
      if (strcasecmp(level, "WARN") == 0) r.level = LogLevel::Warn;
      if (strcasecmp(level, "INFO") == 0) r.level = LogLevel::Info;
      if (strcasecmp(level, "TRACE") == 0) r.level = LogLevel::Trace;
    }
    if (const char* mask = std::getenv("QCCL_DEBUG_SUBSYS")) {
      const bool invert = mask[0] == '^';
      uint32_t bits = 0;
      std::string list(mask + (invert ? 1 : 0));
      size_t start = 0;
      while (start <= list.size()) {
        const size_t end = list.find(',', start);
        bits |= subsysBit(list.substr(start, end == std::string::npos ? end : end - start));
        if (end == std::string::npos) break;
        start = end + 1;
      }
      r.subsys = invert ? ~bits : bits;
    }
    if (const char* file = std::getenv("QCCL_DEBUG_FILE")) r.file = openLogFile(file);
    return r;
  }();
  return s;
}

thread_local int tlsRank = -1;

const char* levelName(LogLevel level) {
  switch (level) {
    case LogLevel::Warn: return "WARN";
    case LogLevel::Info: return "INFO";
    case LogLevel::Trace: return "TRACE";
    default: return "";
  }
}

}  // namespace

bool logEnabled(LogLevel level, uint32_t subsys) {
  const LogSettings& s = settings();
  return level <= s.level && (level == LogLevel::Warn || (subsys & s.subsys) != 0);
}

void setLogRank(int rank) { tlsRank = rank; }

void logMessage(LogLevel level, uint32_t, const char* format, ...) {
  static std::mutex mutex;
  const std::string host = hostName();
  char message[2048];
  va_list args;
  va_start(args, format);
  std::vsnprintf(message, sizeof message, format, args);
  va_end(args);
  std::lock_guard<std::mutex> lock(mutex);
  std::fprintf(settings().file, "%s:%d:%ld [%d] QCCL %s %s\n", host.c_str(), int(getpid()),
               long(syscall(SYS_gettid)), tlsRank, levelName(level), message);
  std::fflush(settings().file);
}

}  // namespace qccl
