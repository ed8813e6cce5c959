#include "src/common/host_name.h"

#include <unistd.h>

namespace qccl {

std::string hostName() {
  char host[256] = "";
  if (gethostname(host, sizeof host - 1) != 0) return "host";
  return host;
}

}  // namespace qccl
