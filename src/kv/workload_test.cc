#include "kv/workload.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <vector>

namespace zonelab::rocksdb_plugin {
namespace {

constexpr int kDraws = 200'000;

const WorkloadSpec& spec(std::string_view name) {
  const WorkloadSpec* s = find_workload(name);
  EXPECT_NE(s, nullptr) << name;
  return *s;
}

GeneratorParams params(uint64_t records, uint64_t seed = 7, uint32_t thread = 0) {
  GeneratorParams p;
  p.records = records;
  p.ops = records;
  p.seed = seed;
  p.thread = thread;
  return p;
}

TEST(KvWorkloadTable, HoldsDbBenchAndYcsbAToFOnce) {
  std::set<std::string_view> names;
  for (const WorkloadSpec& s : workloads()) {
    EXPECT_TRUE(names.insert(s.name).second) << s.name;
    double sum = 0;
    for (double share : s.proportions) sum += share;
    EXPECT_NEAR(sum, 1.0, 1e-12) << s.name;
  }
  for (const char* name :
       {"fillseq", "fillrandom", "overwrite", "readrandom", "updaterandom", "readwhilewriting",
        "ycsb-a", "ycsb-b", "ycsb-c", "ycsb-d", "ycsb-e", "ycsb-f", "verify"}) {
    EXPECT_TRUE(names.count(name)) << name;
  }
  EXPECT_EQ(find_workload("ycsb-g"), nullptr);
}

TEST(KvWorkloadTable, YcsbRowsAreYcsbsDefinitions) {
  auto shares = [](std::string_view name) { return spec(name).proportions; };
  using P = std::array<double, kOpTypeCount>;  // read, update, insert, scan, rmw, write
  EXPECT_EQ(shares("ycsb-a"), (P{0.5, 0.5, 0, 0, 0, 0}));
  EXPECT_EQ(shares("ycsb-b"), (P{0.95, 0.05, 0, 0, 0, 0}));
  EXPECT_EQ(shares("ycsb-c"), (P{1, 0, 0, 0, 0, 0}));
  EXPECT_EQ(shares("ycsb-d"), (P{0.95, 0, 0.05, 0, 0, 0}));
  EXPECT_EQ(shares("ycsb-e"), (P{0, 0, 0.05, 0.95, 0, 0}));
  EXPECT_EQ(shares("ycsb-f"), (P{0.5, 0, 0, 0, 0.5, 0}));
  EXPECT_EQ(spec("ycsb-d").distribution, KeyDistribution::kLatest);
  for (const char* name : {"ycsb-a", "ycsb-b", "ycsb-c", "ycsb-e", "ycsb-f"}) {
    EXPECT_EQ(spec(name).distribution, KeyDistribution::kZipfian) << name;
  }
  EXPECT_EQ(spec("ycsb-e").max_scan_length, 100u);
}

TEST(KvWorkloadOps, ProportionsWithinTolerance) {
  for (const WorkloadSpec& s : workloads()) {
    if (s.family != WorkloadFamily::kYcsb) continue;
    InsertCounter inserts(10'000);
    OpGenerator gen(s, params(10'000), &inserts);
    std::array<int, kOpTypeCount> counts{};
    for (int i = 0; i < kDraws; ++i) ++counts[static_cast<size_t>(gen.next_type())];
    for (size_t t = 0; t < kOpTypeCount; ++t) {
      EXPECT_NEAR(counts[t] / double(kDraws), s.proportions[t], 0.005)
          << s.name << " " << op_type_name(static_cast<OpType>(t));
    }
  }
}

TEST(KvWorkloadZipfian, ZetaMatchesYcsbsConstantAndTheExactSum) {
  // YCSB's constant is zeta over 10^10 items, though it draws over 10^16 + 1.
  EXPECT_NEAR(Zipfian::zeta(10'000'000'000ULL, Zipfian::kYcsbTheta), ScrambledZipfian::kSpreadZeta,
              1e-6);
  EXPECT_NEAR(Zipfian::zeta(ScrambledZipfian::kSpreadItems, Zipfian::kYcsbTheta), 45.1205, 1e-3);
  double exact = 0;
  for (int i = 1; i <= 50'000; ++i) exact += 1.0 / std::pow(i, 0.99);
  EXPECT_NEAR(Zipfian::zeta(50'000, 0.99), exact, 1e-9);
}

TEST(KvWorkloadZipfian, MostPopularItemsGetTheirFormulaShare) {
  Zipfian z(1000, Zipfian::kYcsbTheta);
  Rng rng(3);
  std::vector<int> counts(1000);
  for (int i = 0; i < kDraws; ++i) ++counts[z.next(rng)];
  double zeta = Zipfian::zeta(1000, 0.99);
  EXPECT_NEAR(counts[0] / double(kDraws), 1 / zeta, 0.005);
  EXPECT_NEAR(counts[1] / double(kDraws), std::pow(0.5, 0.99) / zeta, 0.005);
  EXPECT_GT(counts[0], counts[10]);
  EXPECT_GT(counts[10], counts[900]);
}

TEST(KvWorkloadZipfian, GrowingAddsTheNewTerms) {
  Zipfian z(100, 0.99);
  z.grow_to(5000);
  EXPECT_EQ(z.items(), 5000u);
  EXPECT_NEAR(z.zeta_items(), Zipfian::zeta(5000, 0.99), 1e-9);
}

TEST(KvWorkloadZipfian, ScrambledHottestKeyHasYcsbsShareAndIsSpread) {
  const uint64_t items = 10'000;
  ScrambledZipfian z(items);
  Rng rng(11);
  std::map<uint64_t, int> counts;
  for (int i = 0; i < kDraws; ++i) ++counts[z.next(rng)];
  auto hottest = std::max_element(counts.begin(), counts.end(),
                                  [](const auto& a, const auto& b) { return a.second < b.second; });
  // The hottest key is where item 0 of the spread lands, not key 0.
  EXPECT_EQ(hottest->first, fnv1a_hash64(0) % items);
  EXPECT_NEAR(hottest->second / double(kDraws), 1 / ScrambledZipfian::kSpreadZeta, 0.004);
  EXPECT_GT(counts.size(), items / 4);  // the tail reaches far
}

TEST(KvWorkloadZipfian, YcsbKeysStayBelowTheWrittenOnes) {
  InsertCounter inserts(1000);
  OpGenerator gen(spec("ycsb-e"), params(1000), &inserts);
  for (int i = 0; i < 20'000; ++i) {
    Op op = gen.next(i);
    if (op.type == OpType::kInsert) {
      inserts.acknowledge(op.key);
      continue;
    }
    EXPECT_LT(op.key, inserts.written());
  }
}

TEST(KvWorkloadLatest, FavorsTheNewestKeys) {
  InsertCounter inserts(1000);
  OpGenerator gen(spec("ycsb-d"), params(1000), &inserts);
  int reads = 0, newest_tenth = 0, newest = 0;
  for (int i = 0; i < kDraws; ++i) {
    Op op = gen.next(i);
    if (op.type == OpType::kInsert) {
      inserts.acknowledge(op.key);
      continue;
    }
    ++reads;
    uint64_t top = inserts.written() - 1;
    ASSERT_LE(op.key, top);
    newest_tenth += top - op.key < inserts.written() / 10;
    newest += op.key == top;
  }
  EXPECT_GT(inserts.written(), 1000u);  // inserts moved the newest key on
  EXPECT_GT(newest_tenth / double(reads), 0.6);
  // The newest key gets item 0's zipfian share over the keys written then
  // (between 1000 keys' and the final count's).
  EXPECT_GT(newest / double(reads), 1 / Zipfian::zeta(inserts.written(), 0.99) - 0.005);
  EXPECT_LT(newest / double(reads), 1 / Zipfian::zeta(1000, 0.99) + 0.005);
}

TEST(KvWorkloadUniform, CoversTheRangeEvenly) {
  OpGenerator gen(spec("readrandom"), params(1000), nullptr);
  std::vector<int> counts(1000);
  double sum = 0;
  for (int i = 0; i < kDraws; ++i) {
    Op op = gen.next(i);
    ASSERT_EQ(op.type, OpType::kRead);
    ASSERT_LT(op.key, 1000u);
    ++counts[op.key];
    sum += double(op.key);
  }
  EXPECT_GT(*std::min_element(counts.begin(), counts.end()), 100);  // expected 200 each
  EXPECT_LT(*std::max_element(counts.begin(), counts.end()), 300);
  EXPECT_NEAR(sum / kDraws, 499.5, 5);
}

TEST(KvWorkloadSequential, FillseqTakesTheOperationIndex) {
  OpGenerator gen(spec("fillseq"), params(100), nullptr);
  for (uint64_t i = 0; i < 100; ++i) {
    Op op = gen.next(i);
    EXPECT_EQ(op.type, OpType::kWrite);
    EXPECT_EQ(op.key, i);
  }
}

TEST(KvWorkloadScan, LengthsAreUniformFromOneToTheMaximum) {
  InsertCounter inserts(1000);
  OpGenerator gen(spec("ycsb-e"), params(1000), &inserts);
  std::set<uint32_t> lengths;
  for (int i = 0; i < 50'000; ++i) {
    Op op = gen.next(i);
    if (op.type == OpType::kInsert) {
      inserts.acknowledge(op.key);
    } else {
      ASSERT_GE(op.scan_length, 1u);
      ASSERT_LE(op.scan_length, 100u);
      lengths.insert(op.scan_length);
    }
  }
  EXPECT_EQ(lengths.size(), 100u);
}

std::vector<Op> ops_of(std::string_view name, uint64_t seed, uint32_t thread) {
  InsertCounter inserts(5000);
  OpGenerator gen(spec(name), params(5000, seed, thread), &inserts);
  std::vector<Op> out;
  for (int i = 0; i < 1000; ++i) {
    out.push_back(gen.next(i));
    if (out.back().type == OpType::kInsert) inserts.acknowledge(out.back().key);
  }
  return out;
}

bool same(const std::vector<Op>& a, const std::vector<Op>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const Op& x, const Op& y) {
    return x.type == y.type && x.key == y.key && x.scan_length == y.scan_length;
  });
}

TEST(KvWorkloadOps, SameSeedSameSequence) {
  for (const char* name : {"fillrandom", "ycsb-a", "ycsb-d", "ycsb-e", "ycsb-f"}) {
    EXPECT_TRUE(same(ops_of(name, 42, 0), ops_of(name, 42, 0))) << name;
    EXPECT_FALSE(same(ops_of(name, 42, 0), ops_of(name, 43, 0))) << name;
    EXPECT_FALSE(same(ops_of(name, 42, 0), ops_of(name, 42, 1))) << name;
  }
}

TEST(KvWorkloadInserts, AcknowledgedOutOfOrderCountOnceContiguous) {
  InsertCounter c(10);
  uint64_t a = c.take(), b = c.take(), d = c.take();
  EXPECT_EQ(c.taken(), 13u);
  c.acknowledge(b);
  EXPECT_EQ(c.written(), 10u);  // 10 is still being written
  c.acknowledge(a);
  EXPECT_EQ(c.written(), 12u);
  c.acknowledge(d);
  EXPECT_EQ(c.written(), 13u);
}

TEST(KvKeys, DbBenchKeyIsBigEndianPaddedWithZeros) {
  std::string key = db_bench_key(0x0102, 16);
  EXPECT_EQ(key, std::string("\0\0\0\0\0\0\x01\x02", 8) + "00000000");
  EXPECT_EQ(db_bench_key(5, 8).size(), 8u);
  EXPECT_LT(db_bench_key(255, 16), db_bench_key(256, 16));  // order kept
}

TEST(KvKeys, YcsbKeyIsUserAndTheFnvHash) {
  EXPECT_EQ(ycsb_key(0), "user6284781860667377211");
  EXPECT_EQ(ycsb_key(1), "user8517097267634966620");
  EXPECT_EQ(ycsb_key(2), "user1820151046732198393");
  EXPECT_EQ(key_for(WorkloadFamily::kYcsb, 0, 16), ycsb_key(0));
  EXPECT_EQ(key_for(WorkloadFamily::kDbBench, 0, 16), db_bench_key(0, 16));
}

TEST(KvValues, DeterministicPrintableAndHalfCompressible) {
  std::string a, b, c;
  fill_value(7, 1, 250, &a);
  fill_value(7, 1, 250, &b);
  fill_value(8, 1, 250, &c);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  fill_value(7, 2, 250, &c);
  EXPECT_NE(a, c);
  ASSERT_EQ(a.size(), 250u);
  for (char ch : a) EXPECT_TRUE(ch >= ' ' && ch <= '~');
  for (size_t i = 0; i < 50; ++i) {
    EXPECT_EQ(a[i], a[i + 50]);                 // each 100-byte piece: 50 bytes twice
    EXPECT_EQ(a[200 + i / 2], a[225 + i / 2]);  // the short last piece too
  }
  fill_value(1, 1, 0, &a);
  EXPECT_TRUE(a.empty());
}

}  // namespace
}  // namespace zonelab::rocksdb_plugin
