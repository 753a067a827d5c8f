// See kv/workload.h.
#include "kv/workload.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "zonelab/assert.h"

namespace zonelab::rocksdb_plugin {
namespace {

using P = std::array<double, kOpTypeCount>;  // read, update, insert, scan, rmw, write

// The workloads. YCSB's rows are its workloads/workloada..f files
// (proportions, request distribution; E's scans uniform up to 100 long).
constexpr WorkloadSpec kWorkloads[] = {
    {"fillseq", WorkloadFamily::kDbBench, "write keys 0..num-1 in order", P{0, 0, 0, 0, 0, 1},
     KeyDistribution::kSequential, false, 0},
    {"fillrandom", WorkloadFamily::kDbBench, "write num random keys of [0, num)",
     P{0, 0, 0, 0, 0, 1}, KeyDistribution::kUniform, false, 0},
    {"overwrite", WorkloadFamily::kDbBench, "write num random keys of [0, num) over a full DB",
     P{0, 0, 0, 0, 0, 1}, KeyDistribution::kUniform, false, 0},
    {"readrandom", WorkloadFamily::kDbBench, "read random keys of [0, num)", P{1, 0, 0, 0, 0, 0},
     KeyDistribution::kUniform, false, 0},
    {"updaterandom", WorkloadFamily::kDbBench,
     "read a random key of [0, num) and write it back (read-modify-write)", P{0, 0, 0, 0, 1, 0},
     KeyDistribution::kUniform, false, 0},
    {"readwhilewriting", WorkloadFamily::kDbBench,
     "threads read random keys while one thread writes random keys", P{1, 0, 0, 0, 0, 0},
     KeyDistribution::kUniform, true, 0},
    {"ycsb-a", WorkloadFamily::kYcsb, "update heavy: session store", P{0.5, 0.5, 0, 0, 0, 0},
     KeyDistribution::kZipfian, false, 0},
    {"ycsb-b", WorkloadFamily::kYcsb, "read mostly: photo tagging", P{0.95, 0.05, 0, 0, 0, 0},
     KeyDistribution::kZipfian, false, 0},
    {"ycsb-c", WorkloadFamily::kYcsb, "read only: user profile cache", P{1, 0, 0, 0, 0, 0},
     KeyDistribution::kZipfian, false, 0},
    {"ycsb-d", WorkloadFamily::kYcsb, "read latest: user status updates", P{0.95, 0, 0.05, 0, 0, 0},
     KeyDistribution::kLatest, false, 0},
    {"ycsb-e", WorkloadFamily::kYcsb, "short ranges: threaded conversations",
     P{0, 0, 0.05, 0.95, 0, 0}, KeyDistribution::kZipfian, false, 100},
    {"ycsb-f", WorkloadFamily::kYcsb, "read-modify-write: user database", P{0.5, 0, 0, 0, 0.5, 0},
     KeyDistribution::kZipfian, false, 0},
    {"verify", WorkloadFamily::kVerify,
     "check that every key of --ack-log holds the value of (key, --seed)", P{1, 0, 0, 0, 0, 0},
     KeyDistribution::kSequential, false, 0},
};

constexpr uint64_t kFnvOffsetBasis64 = 0xCBF29CE484222325ULL;
constexpr uint64_t kFnvPrime64 = 1099511628211ULL;

// Terms of zeta summed one by one; past this, Euler-Maclaurin.
constexpr uint64_t kZetaExactTerms = 10'000;
// Draws a zipfian key may take to land below the written keys.
constexpr int kKeyRedrawsMax = 64;

// db_bench's piece of a value: this many bytes, half of them random.
constexpr uint32_t kValuePieceBytes = 100;

}  // namespace

std::string_view op_type_name(OpType type) {
  switch (type) {
    case OpType::kRead:
      return "read";
    case OpType::kUpdate:
      return "update";
    case OpType::kInsert:
      return "insert";
    case OpType::kScan:
      return "scan";
    case OpType::kReadModifyWrite:
      return "read-modify-write";
    case OpType::kWrite:
      return "write";
  }
  return "?";
}

std::string_view key_distribution_name(KeyDistribution distribution) {
  switch (distribution) {
    case KeyDistribution::kSequential:
      return "sequential";
    case KeyDistribution::kUniform:
      return "uniform";
    case KeyDistribution::kZipfian:
      return "zipfian";
    case KeyDistribution::kLatest:
      return "latest";
  }
  return "?";
}

std::span<const WorkloadSpec> workloads() { return kWorkloads; }

const WorkloadSpec* find_workload(std::string_view name) {
  for (const WorkloadSpec& spec : kWorkloads) {
    if (spec.name == name) return &spec;
  }
  return nullptr;
}

std::string workload_names() {
  std::string out;
  for (const WorkloadSpec& spec : kWorkloads) {
    out += (out.empty() ? "" : ", ") + std::string(spec.name);
  }
  return out;
}

// --- keys and values

uint64_t fnv1a_hash64(uint64_t value) {
  uint64_t hash = kFnvOffsetBasis64;
  for (int i = 0; i < 8; ++i) {
    hash ^= value & 0xff;
    hash *= kFnvPrime64;
    value >>= 8;
  }
  // A Java long's absolute value: negative hashes are negated (2^63 has
  // none and stays 2^63).
  return (hash >> 63) != 0 ? ~hash + 1 : hash;
}

std::string db_bench_key(uint64_t number, uint32_t key_bytes) {
  ZL_ASSERT(key_bytes >= kDbBenchKeyBytesMin && key_bytes <= kKeyBytesMax);
  std::string key(key_bytes, '0');
  for (int i = 0; i < 8; ++i) key[i] = static_cast<char>((number >> (56 - 8 * i)) & 0xff);
  return key;
}

std::string ycsb_key(uint64_t number) {
  uint64_t hash = fnv1a_hash64(number);
  // The one hash Java cannot negate prints negative.
  if (hash == (1ULL << 63)) return "user-9223372036854775808";
  return fmt::format("user{}", hash);
}

std::string key_for(WorkloadFamily family, uint64_t number, uint32_t key_bytes) {
  return family == WorkloadFamily::kYcsb ? ycsb_key(number) : db_bench_key(number, key_bytes);
}

void fill_value(uint64_t number, uint64_t seed, uint32_t value_bytes, std::string* out) {
  out->resize(value_bytes);
  Rng rng(derive_seed(seed, number, 0x76616c));
  for (uint32_t piece = 0; piece < value_bytes; piece += kValuePieceBytes) {
    uint32_t piece_bytes = std::min(kValuePieceBytes, value_bytes - piece);
    uint32_t random_bytes = std::max<uint32_t>(1, piece_bytes / 2);
    char* p = out->data() + piece;
    for (uint32_t i = 0; i < random_bytes; ++i) p[i] = static_cast<char>(' ' + rng.below(95));
    for (uint32_t i = random_bytes; i < piece_bytes; ++i) p[i] = p[i - random_bytes];
  }
}

// --- distributions

double unit_interval(Rng& rng) { return static_cast<double>(rng.next() >> 11) * 0x1.0p-53; }

double Zipfian::zeta(uint64_t n, double theta) {
  ZL_ASSERT(theta > 0 && theta < 1);
  const uint64_t exact = std::min(n, kZetaExactTerms);
  double sum = 0;
  for (uint64_t i = 1; i <= exact; ++i) sum += 1.0 / std::pow(static_cast<double>(i), theta);
  if (n == exact) return sum;
  // sum over (m, n] of f(i), f(x) = x^-theta: the integral, half the end
  // terms, and the first two derivative corrections.
  const double m = static_cast<double>(exact);
  const double x = static_cast<double>(n);
  auto f = [theta](double v) { return std::pow(v, -theta); };
  auto f1 = [theta](double v) { return -theta * std::pow(v, -theta - 1); };
  auto f3 = [theta](double v) {
    return -theta * (theta + 1) * (theta + 2) * std::pow(v, -theta - 3);
  };
  double integral = (std::pow(x, 1 - theta) - std::pow(m, 1 - theta)) / (1 - theta);
  return sum + integral + (f(x) - f(m)) / 2 + (f1(x) - f1(m)) / 12 - (f3(x) - f3(m)) / 720;
}

Zipfian::Zipfian(uint64_t items, double theta, std::optional<double> zeta_items)
    : items_(items),
      theta_(theta),
      alpha_(1.0 / (1.0 - theta)),
      zeta_items_(zeta_items ? *zeta_items : zeta(items, theta)),
      zeta_two_(zeta(2, theta)) {
  ZL_ASSERT(items >= 1);
  refresh_eta();
}

void Zipfian::refresh_eta() {
  eta_ =
      (1 - std::pow(2.0 / static_cast<double>(items_), 1 - theta_)) / (1 - zeta_two_ / zeta_items_);
}

void Zipfian::grow_to(uint64_t items) {
  if (items <= items_) return;
  if (items - items_ > kZetaExactTerms) {
    zeta_items_ = zeta(items, theta_);
  } else {
    for (uint64_t i = items_ + 1; i <= items; ++i) {
      zeta_items_ += 1.0 / std::pow(static_cast<double>(i), theta_);
    }
  }
  items_ = items;
  refresh_eta();
}

uint64_t Zipfian::next(Rng& rng) const {
  const double u = unit_interval(rng);
  const double uz = u * zeta_items_;
  if (uz < 1.0 || items_ == 1) return 0;
  if (uz < 1.0 + std::pow(0.5, theta_)) return 1;
  double scaled = static_cast<double>(items_) * std::pow(eta_ * u - eta_ + 1, alpha_);
  auto item = static_cast<uint64_t>(scaled);
  return std::min(item, items_ - 1);
}

ScrambledZipfian::ScrambledZipfian(uint64_t items)
    : items_(items), spread_(kSpreadItems, Zipfian::kYcsbTheta, kSpreadZeta) {
  ZL_ASSERT(items >= 1);
}

uint64_t ScrambledZipfian::next(Rng& rng) const { return fnv1a_hash64(spread_.next(rng)) % items_; }

uint64_t InsertCounter::take() {
  std::lock_guard lock(mutex_);
  return next_++;
}

void InsertCounter::acknowledge(uint64_t key) {
  std::lock_guard lock(mutex_);
  ZL_ASSERT(key >= done_below_ && key < next_);
  done_ahead_.insert(key);
  while (!done_ahead_.empty() && *done_ahead_.begin() == done_below_) {
    done_ahead_.erase(done_ahead_.begin());
    ++done_below_;
  }
}

uint64_t InsertCounter::written() const {
  std::lock_guard lock(mutex_);
  return done_below_;
}

uint64_t InsertCounter::taken() const {
  std::lock_guard lock(mutex_);
  return next_;
}

// --- operations

OpGenerator::OpGenerator(const WorkloadSpec& spec, const GeneratorParams& params,
                         InsertCounter* inserts)
    : spec_(spec),
      params_(params),
      inserts_(inserts),
      rng_(derive_seed(params.seed, params.thread + 1, 0x6b76)) {
  ZL_ASSERT(params.records >= 1);
  double sum = 0;
  for (size_t i = 0; i < kOpTypeCount; ++i) {
    sum += spec.proportions[i];
    cumulative_[i] = sum;
  }
  ZL_ASSERT(std::abs(sum - 1.0) < 1e-9);
  bool inserting = spec.proportions[static_cast<size_t>(OpType::kInsert)] > 0;
  ZL_ASSERT(!inserting || inserts != nullptr);
  if (spec.distribution == KeyDistribution::kZipfian) {
    // Room for the keys inserts will add, as YCSB leaves it: twice the
    // expected inserts (or, with no operation count, the records again).
    double insert_share = spec.proportions[static_cast<size_t>(OpType::kInsert)];
    uint64_t expected_new = 0;
    if (insert_share > 0) {
      expected_new =
          params.ops ? static_cast<uint64_t>(static_cast<double>(*params.ops) * insert_share * 2.0)
                     : params.records;
    }
    scrambled_.emplace(params.records + expected_new);
  } else if (spec.distribution == KeyDistribution::kLatest) {
    ZL_ASSERT(inserts != nullptr);
    latest_.emplace(std::max<uint64_t>(1, inserts->written()), Zipfian::kYcsbTheta);
  }
}

OpType OpGenerator::next_type() {
  const double u = unit_interval(rng_);
  for (size_t i = 0; i < kOpTypeCount; ++i) {
    if (u < cumulative_[i] && spec_.proportions[i] > 0) return static_cast<OpType>(i);
  }
  // Rounding left u at the top: the last type with a share.
  for (size_t i = kOpTypeCount; i-- > 0;) {
    if (spec_.proportions[i] > 0) return static_cast<OpType>(i);
  }
  ZL_ASSERT(false);  // the constructor checked that the shares sum to 1
  return OpType::kRead;
}

uint64_t OpGenerator::zipfian_key() {
  const uint64_t written = inserts_ != nullptr ? inserts_->written() : params_.records;
  for (int i = 0; i < kKeyRedrawsMax; ++i) {
    uint64_t key = scrambled_->next(rng_);
    if (key < written) return key;  // not a key still to be inserted
  }
  return rng_.below(std::max<uint64_t>(1, written));
}

uint64_t OpGenerator::latest_key() {
  const uint64_t written = std::max<uint64_t>(1, inserts_->written());
  latest_->grow_to(written);
  return (written - 1) - latest_->next(rng_);
}

uint64_t OpGenerator::next_key(uint64_t op_index) {
  switch (spec_.distribution) {
    case KeyDistribution::kSequential:
      return op_index;
    case KeyDistribution::kUniform:
      return rng_.below(params_.records);
    case KeyDistribution::kZipfian:
      return zipfian_key();
    case KeyDistribution::kLatest:
      return latest_key();
  }
  ZL_ASSERT(false);
  return 0;
}

Op OpGenerator::next(uint64_t op_index) {
  Op op;
  op.type = next_type();
  if (op.type == OpType::kInsert) {
    op.key = inserts_->take();
    return op;
  }
  op.key = next_key(op_index);
  if (op.type == OpType::kScan) {
    op.scan_length =
        1 + static_cast<uint32_t>(rng_.below(std::max<uint32_t>(1, spec_.max_scan_length)));
  }
  return op;
}

}  // namespace zonelab::rocksdb_plugin
