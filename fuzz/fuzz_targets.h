// Fuzz targets: functions that take arbitrary bytes and must neither crash
// nor break a round-trip property. libFuzzer drives them
// (fuzz/libfuzzer_main.cc, scripts/fuzz.sh); zonelab_fuzz_replay runs the
// committed corpus through them as an ordinary test.
#pragma once

#include <cstddef>
#include <cstdint>

namespace zonelab {

// The bytes as a whole device image. A decoded image must encode and decode
// back to the same state; a refused one must give a one-line message.
// Returns 0; a broken property calls abort().
int fuzz_image_decode(const uint8_t* data, size_t size);

// The bytes as a TOML configuration over the default one. An accepted
// configuration must print (config_to_toml), parse back onto an empty Config
// and print identically. Returns 0; a broken property calls abort().
int fuzz_config_toml(const uint8_t* data, size_t size);

// The bytes as a TOML job file (bench --job). A refused file must give a
// one-line message; an accepted one must hold 1 to 256 jobs whose every
// option lies within its documented limit. Returns 0; a broken property
// calls abort().
int fuzz_job_file(const uint8_t* data, size_t size);

}  // namespace zonelab
