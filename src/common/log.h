// Logging in NCCL's manner: QCCL_DEBUG=VERSION|WARN|INFO|TRACE, QCCL_DEBUG_SUBSYS=INIT,BOOTSTRAP,
// TRANSPORT,COLL,EF,ENV (or ALL; ^X excludes), QCCL_DEBUG_FILE (%h host, %p pid). Lines look like
// "host:pid:tid [rank] QCCL INFO <message>".
#pragma once

#include <cstdint>

namespace qccl {

enum class LogLevel { None = 0, Version = 1, Warn = 2, Info = 3, Trace = 4 };

enum LogSubsys : uint32_t {
  kLogInit = 1u << 0,
  kLogBootstrap = 1u << 1,
  kLogTransport = 1u << 2,
  kLogColl = 1u << 3,
  kLogEf = 1u << 4,
  kLogEnv = 1u << 5,
  kLogAll = ~0u,
};

bool logEnabled(LogLevel level, uint32_t subsys);
void logMessage(LogLevel level, uint32_t subsys, const char* format, ...)
    __attribute__((format(printf, 3, 4)));
// The rank shown in this thread's log lines (-1: none).
void setLogRank(int rank);

}  // namespace qccl

#define QCCL_LOG(level, subsys, ...)                                                       \
  do {                                                                                     \
    if (::qccl::logEnabled(level, subsys)) ::qccl::logMessage(level, subsys, __VA_ARGS__); \
  } while (0)
#define QCCL_WARN(...) QCCL_LOG(::qccl::LogLevel::Warn, ::qccl::kLogAll, __VA_ARGS__)
#define QCCL_INFO(subsys, ...) QCCL_LOG(::qccl::LogLevel::Info, subsys, __VA_ARGS__)
#define QCCL_TRACE(subsys, ...) QCCL_LOG(::qccl::LogLevel::Trace, subsys, __VA_ARGS__)
