// This machine's host name (for grouping ranks by node, and for log lines and file names).
#pragma once

#include <string>

namespace qccl {

std::string hostName();

}  // namespace qccl
