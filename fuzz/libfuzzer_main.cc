// The libFuzzer entry point for one target, chosen at compile time with
// -DZONELAB_FUZZ_TARGET=fuzz_image_decode (or fuzz_config_toml); built and
// run by scripts/fuzz.sh, not by CMake.
#include <cstddef>
#include <cstdint>

#include "fuzz_targets.h"

#ifndef ZONELAB_FUZZ_TARGET
#error "define ZONELAB_FUZZ_TARGET as fuzz_image_decode or fuzz_config_toml"
#endif

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return zonelab::ZONELAB_FUZZ_TARGET(data, size);
}
