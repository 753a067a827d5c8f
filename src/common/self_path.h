// Where the running executable is, and files shipped beside it (the RocksDB
// plugin, the guest's hint shim).
#pragma once

#include <string>

namespace zonelab {

// The running executable's path; empty if the kernel does not say.
std::string executable_path();
// `name` in the executable's directory (`name` alone if that is unknown).
std::string beside_executable(const std::string& name);

}  // namespace zonelab
