// See self_path.h.
#include "common/self_path.h"

#include <unistd.h>

#include <climits>

namespace zonelab {

std::string executable_path() {
  char path[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) return {};
  return std::string(path, static_cast<size_t>(n));
}

std::string beside_executable(const std::string& name) {
  const std::string self = executable_path();
  const size_t slash = self.rfind('/');
  return slash == std::string::npos ? name : self.substr(0, slash + 1) + name;
}

}  // namespace zonelab
