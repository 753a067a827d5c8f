// The model's one kind of randomness: xoshiro256** seeded through
// splitmix64. Every random choice in zonelab draws from an Rng made from
// the configuration's `seed`, so runs repeat exactly.
#pragma once

#include <cstdint>

namespace zonelab {

inline uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

class Rng {
 public:
  explicit Rng(uint64_t seed) {
    uint64_t s = seed;
    for (auto& word : state_) word = splitmix64(s);
  }

  uint64_t next() {
    uint64_t result = rotl(state_[1] * 5, 7) * 9;
    uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = rotl(state_[3], 45);
    return result;
  }

  // Uniform in [0, bound) by multiply-shift; bound > 0.
  uint64_t below(uint64_t bound) {
    __extension__ typedef unsigned __int128 Wide;
    return static_cast<uint64_t>((static_cast<Wide>(next()) * bound) >> 64);
  }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t state_[4];
};

// Derives independent seeds for parts of a run (job j, clone k).
inline uint64_t derive_seed(uint64_t seed, uint64_t a, uint64_t b = 0) {
  uint64_t s = seed ^ (a * 0xD1B54A32D192ED03ULL) ^ (b * 0x8CB92BA72F3D8DD7ULL);
  return splitmix64(s);
}

}  // namespace zonelab
