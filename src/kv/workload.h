// Key-value workloads as pure generators: which operation comes next, on
// which key, with what value. Nothing here talks to RocksDB (kv_runner.h
// does), so the mix, the skew and the key formats are tested alone.
//
// Two families share one table (kWorkloads):
//   - db_bench's fillseq, fillrandom, overwrite, readrandom and
//     readwhilewriting: keys are numbers in [0, num), written as db_bench
//     writes them (8 bytes big-endian, padded with '0' to the key size);
//   - YCSB's core workloads A-F: a load phase inserts `records` keys, then
//     the run phase draws operations in the workload's proportions, keys from
//     its request distribution (scrambled zipfian with constant 0.99,
//     latest, or uniform), and names a key "user" + the FNV-1a hash of its
//     number (YCSB's insertorder=hashed).
//
// Everything is deterministic from a seed: the same seed, the same thread
// index and the same workload give the same sequence of operations.
#pragma once

#include <array>
#include <cstdint>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>

#include "common/rng.h"

namespace zonelab::rocksdb_plugin {

// What one operation does; each type gets its own counts and latencies.
enum class OpType : uint8_t {
  kRead,             // Get
  kUpdate,           // Put of an existing key (YCSB)
  kInsert,           // Put of a new key (YCSB)
  kScan,             // an iterator: Seek, then up to scan_length Next
  kReadModifyWrite,  // Get, then Put of the same key (YCSB)
  kWrite,            // Put (db_bench)
};
inline constexpr size_t kOpTypeCount = 6;
std::string_view op_type_name(OpType type);

// Where keys come from.
enum class KeyDistribution : uint8_t {
  kSequential,  // the operation's index: 0, 1, 2, ...
  kUniform,     // every key alike
  kZipfian,     // YCSB's scrambled zipfian: a few keys hot, spread over the key space
  kLatest,      // zipfian over insertion order: the newest keys hottest
};
std::string_view key_distribution_name(KeyDistribution distribution);

enum class WorkloadFamily : uint8_t { kDbBench, kYcsb, kVerify };

struct WorkloadSpec {
  std::string_view name;
  WorkloadFamily family;
  std::string_view summary;
  // Share of each operation type (indexed by OpType), summing to 1.
  std::array<double, kOpTypeCount> proportions;
  KeyDistribution distribution;
  // A writer thread runs beside the operation threads (db_bench's
  // readwhilewriting), writing random keys until they are done.
  bool background_writer;
  // Scans take a length uniform in [1, max_scan_length] (YCSB E).
  uint32_t max_scan_length;
};

// Every workload `zonelab kv --workload` knows, in the order help lists them.
std::span<const WorkloadSpec> workloads();
const WorkloadSpec* find_workload(std::string_view name);
// "fillseq, fillrandom, ..." for messages.
std::string workload_names();

// --- keys and values

inline constexpr uint32_t kDbBenchKeyBytesMin = 8;
inline constexpr uint32_t kKeyBytesMax = 1024;

// YCSB's 64-bit FNV-1a over the number's eight bytes (least significant
// first), made non-negative as a Java long's absolute value.
uint64_t fnv1a_hash64(uint64_t value);
// db_bench's key: the number as 8 bytes big-endian, padded with '0' to
// `key_bytes` (kDbBenchKeyBytesMin..kKeyBytesMax).
std::string db_bench_key(uint64_t number, uint32_t key_bytes);
// YCSB's key with insertorder=hashed: "user" + the decimal hash.
std::string ycsb_key(uint64_t number);
// A key as the workload's family names it.
std::string key_for(WorkloadFamily family, uint64_t number, uint32_t key_bytes);

// The value of key `number`: `value_bytes` bytes from (number, seed) alone,
// so any write of a key can be checked later. Half compressible as
// db_bench's: each 100-byte piece is 50 random printable bytes, repeated.
void fill_value(uint64_t number, uint64_t seed, uint32_t value_bytes, std::string* out);

// --- distributions

// Uniform double in [0, 1) from 53 bits.
double unit_interval(Rng& rng);

// Zipfian over [0, items) with constant theta (item 0 the most popular;
// P(i) = (1 / (i + 1)^theta) / zeta(items)), drawn by the method of Gray et
// al. (SIGMOD 1994) as YCSB draws it. The item count may grow (latest); zeta
// then grows by the new terms.
class Zipfian {
 public:
  static constexpr double kYcsbTheta = 0.99;
  // `zeta_items` is zeta(items, theta) when already known.
  Zipfian(uint64_t items, double theta, std::optional<double> zeta_items = std::nullopt);
  uint64_t next(Rng& rng) const;
  // More items (never fewer).
  void grow_to(uint64_t items);
  uint64_t items() const { return items_; }
  double zeta_items() const { return zeta_items_; }
  // The share of draws item 0 gets.
  double top_share() const { return 1.0 / zeta_items_; }

  // sum over i in [1, n] of 1 / i^theta: exact to 10^6 terms, past that
  // by Euler-Maclaurin (error far below a double's precision at that size).
  static double zeta(uint64_t n, double theta);

 private:
  void refresh_eta();

  uint64_t items_;
  double theta_;
  double alpha_;
  double zeta_items_;
  double zeta_two_;
  double eta_ = 0;
};

// YCSB's scrambled zipfian: a zipfian draw over 10^16 + 1 items, hashed
// (fnv1a_hash64) onto [0, items). Its zeta is YCSB's constant, 26.469...,
// which is the sum for 10^10 items (the sum for 10^16 is 45.12): YCSB keeps
// it, so the hottest key gets about 1/26.47 of the draws wherever it lands,
// and so it is kept here.
class ScrambledZipfian {
 public:
  static constexpr uint64_t kSpreadItems = 10'000'000'000'000'000ULL + 1;
  static constexpr double kSpreadZeta = 26.46902820178302;
  explicit ScrambledZipfian(uint64_t items);
  uint64_t next(Rng& rng) const;
  uint64_t items() const { return items_; }

 private:
  uint64_t items_;
  Zipfian spread_;
};

// Key numbers handed to inserts, and the highest one every insert below
// has finished (YCSB's acknowledged counter): reads are drawn only up to
// it, so that no thread reads a key another is still writing. Thread-safe.
class InsertCounter {
 public:
  // Keys [0, first) exist already.
  explicit InsertCounter(uint64_t first) : next_(first), done_below_(first) {}
  uint64_t take();
  void acknowledge(uint64_t key);
  // Every key below this is written.
  uint64_t written() const;
  uint64_t taken() const;

 private:
  mutable std::mutex mutex_;
  uint64_t next_;
  uint64_t done_below_;
  std::set<uint64_t> done_ahead_;  // acknowledged out of order; at most a few per thread
};

// --- operations

struct Op {
  OpType type = OpType::kRead;
  uint64_t key = 0;
  uint32_t scan_length = 0;  // kScan only
};

struct GeneratorParams {
  uint64_t records = 0;  // keys in [0, records) exist (YCSB) or may (db_bench)
  // Run-phase operations, when known: the zipfian key space leaves room for
  // twice the inserts they are expected to make (as YCSB does).
  std::optional<uint64_t> ops;
  uint64_t seed = 0;
  uint32_t thread = 0;
};

// One thread's operations. Inserts take their keys from the shared counter
// (the caller acknowledges each when written); sequential keys come from
// the operation index the caller passes (shared across threads).
class OpGenerator {
 public:
  OpGenerator(const WorkloadSpec& spec, const GeneratorParams& params, InsertCounter* inserts);
  Op next(uint64_t op_index);
  // A random key in [0, records) for the background writer.
  uint64_t uniform_key() { return rng_.below(params_.records); }
  OpType next_type();
  uint64_t next_key(uint64_t op_index);

 private:
  uint64_t zipfian_key();
  uint64_t latest_key();

  const WorkloadSpec& spec_;
  GeneratorParams params_;
  InsertCounter* inserts_;
  Rng rng_;
  std::array<double, kOpTypeCount> cumulative_{};
  std::optional<ScrambledZipfian> scrambled_;
  std::optional<Zipfian> latest_;
};

}  // namespace zonelab::rocksdb_plugin
