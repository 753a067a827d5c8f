// Sweep specs: how a spec expands into points (their order, labels and
// keys), what it refuses and on which line; running a point (deterministic,
// its seed and overrides applied); the point cache's damaged entries; and
// the sweep's CSV and JSON files.
#include "sweep/sweep.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "experiments/experiment.h"
#include "zonelab/config.h"

namespace zonelab {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

constexpr const char* kOrigin = "t.toml";

SweepSpec parsed(std::string_view text, std::string_view origin = kOrigin) {
  auto spec = parse_sweep_spec_text(text, origin);
  EXPECT_TRUE(spec.ok()) << spec.error() << "\nin:\n" << text;
  return spec.ok() ? *spec : SweepSpec{};
}

// The spec is refused with a one-line message "t.toml:LINE: ...FRAGMENT..."
// ("t.toml: ..." for line 0).
::testing::AssertionResult refused_at(std::string_view text, int line, std::string_view fragment) {
  auto spec = parse_sweep_spec_text(text, kOrigin);
  if (spec.ok()) {
    return ::testing::AssertionFailure() << "accepted (" << spec->points.size() << " points):\n"
                                         << text;
  }
  const std::string& error = spec.error();
  std::string prefix =
      line == 0 ? fmt::format("{}: ", kOrigin) : fmt::format("{}:{}:", kOrigin, line);
  if (!error.starts_with(prefix)) {
    return ::testing::AssertionFailure()
           << "'" << error << "' does not start with '" << prefix << "'";
  }
  if (error.find(fragment) == std::string::npos) {
    return ::testing::AssertionFailure() << "'" << error << "' does not say '" << fragment << "'";
  }
  if (error.find('\n') != std::string::npos) {
    return ::testing::AssertionFailure() << "a message of more than one line: " << error;
  }
  return ::testing::AssertionSuccess();
}

// A bench spec's fixed part: a tiny job on the small preset.
constexpr std::string_view kJob = "[job]\nrw = \"write\"\nsize = \"1%\"\n";

// --- Expansion -----------------------------------------------------------------

// [[points]] outermost, then the grid's axes (the first outermost, the last
// turning fastest), then the seeds.
constexpr std::string_view kOrdered = R"(preset = "small"
seeds = [7, 9]
[job]
rw = "write"
size = "1%"
[[points]]
"zns.max_open" = 2
[[points]]
"zns.max_active" = 8
"zns.max_open" = 4
[grid]
"job.iodepth" = [1, 2]
"job.bs" = ["4k", "8k", "16k"]
)";

TEST(SweepSpec, ExpandsListThenGridAxesThenSeedsInThatNesting) {
  SweepSpec spec = parsed(kOrdered);
  EXPECT_EQ(spec.kind, SweepSpec::Kind::kBench);
  EXPECT_EQ(spec.name, "t");
  EXPECT_TRUE(spec.seeded);
  EXPECT_EQ(spec.axes,
            (std::vector<std::string>{"zns.max_open", "zns.max_active", "job.iodepth", "job.bs"}));
  ASSERT_EQ(spec.points.size(), 2u * 2 * 3 * 2);

  struct Entry {
    std::string max_open, max_active;
  };
  const Entry list[] = {{"2", ""}, {"4", "8"}};
  size_t index = 0;
  for (const Entry& entry : list) {
    for (const char* iodepth : {"1", "2"}) {
      for (const char* bs : {"4k", "8k", "16k"}) {
        for (uint64_t seed : {7u, 9u}) {
          ASSERT_LT(index, spec.points.size());
          const SweepPoint& p = spec.points[index];
          SCOPED_TRACE(fmt::format("point {}: {}", index, p.label));
          EXPECT_EQ(p.index, index);
          ASSERT_EQ(p.coordinates.size(), 4u);
          EXPECT_EQ(p.coordinates[0].key, "zns.max_open");
          EXPECT_EQ(p.coordinates[0].text, entry.max_open);
          EXPECT_EQ(p.coordinates[1].key, "zns.max_active");
          EXPECT_EQ(p.coordinates[1].text, entry.max_active);
          EXPECT_EQ(p.coordinates[2].key, "job.iodepth");
          EXPECT_EQ(p.coordinates[2].text, iodepth);
          EXPECT_EQ(p.coordinates[3].key, "job.bs");
          EXPECT_EQ(p.coordinates[3].text, bs);
          EXPECT_EQ(p.seed, std::optional<uint64_t>(seed));
          EXPECT_EQ(p.preset, "small");
          // A list entry's missing key is no part of its label.
          std::string label =
              entry.max_active.empty()
                  ? fmt::format("zns.max_open={} job.iodepth={} job.bs={} seed={}", entry.max_open,
                                iodepth, bs, seed)
                  : fmt::format(
                        "zns.max_open={} zns.max_active={} job.iodepth={} job.bs={} seed={}",
                        entry.max_open, entry.max_active, iodepth, bs, seed);
          EXPECT_EQ(p.label, label);
          // The spec's [job] first, then the axes'.
          ASSERT_EQ(p.job.size(), 4u);
          EXPECT_EQ(p.job[2], (std::pair<std::string, std::string>{"iodepth", iodepth}));
          EXPECT_EQ(p.job[3], (std::pair<std::string, std::string>{"bs", bs}));
          ++index;
        }
      }
    }
  }
  EXPECT_EQ(spec.points[0].overrides, std::vector<std::string>{"zns.max_open=2"});
  EXPECT_EQ(spec.points[12].overrides,
            (std::vector<std::string>{"zns.max_open=4", "zns.max_active=8"}));
}

TEST(SweepSpec, ExpandsMembersInsideTheGridAndOutsideTheSeeds) {
  SweepSpec spec = parsed(R"(experiment = "block-tax"
members = ["capacity_and_wa", "overwrite_throughput"]
seeds = [3, 4]
[grid]
"zns.max_open" = [2, 4]
)");
  EXPECT_EQ(spec.kind, SweepSpec::Kind::kExperiment);
  EXPECT_EQ(spec.experiment, "block-tax");
  EXPECT_FALSE(spec.plot.has_value());  // an experiment sweep has no default plot
  const char* expected[] = {
      "capacity_and_wa zns.max_open=2 seed=3",      "capacity_and_wa zns.max_open=2 seed=4",
      "overwrite_throughput zns.max_open=2 seed=3", "overwrite_throughput zns.max_open=2 seed=4",
      "capacity_and_wa zns.max_open=4 seed=3",      "capacity_and_wa zns.max_open=4 seed=4",
      "overwrite_throughput zns.max_open=4 seed=3", "overwrite_throughput zns.max_open=4 seed=4",
  };
  ASSERT_EQ(spec.points.size(), std::size(expected));
  for (size_t i = 0; i < spec.points.size(); ++i) {
    EXPECT_EQ(spec.points[i].label, expected[i]) << i;
    EXPECT_EQ(spec.points[i].member, i % 4 < 2 ? "capacity_and_wa" : "overwrite_throughput");
  }
}

TEST(SweepSpec, AnExperimentSweepWithoutMembersRunsEveryMemberOnce) {
  SweepSpec spec = parsed("experiment = \"block-tax\"\n");
  const ExperimentSet* set = find_experiment_set("block-tax");
  ASSERT_NE(set, nullptr);
  ASSERT_EQ(spec.points.size(), set->experiments.size());
  for (size_t i = 0; i < spec.points.size(); ++i) {
    EXPECT_EQ(spec.points[i].member, set->experiments[i].name);
    EXPECT_EQ(spec.points[i].label, set->experiments[i].name);
    EXPECT_FALSE(spec.points[i].seed.has_value());
  }
}

TEST(SweepSpec, ABenchSpecWithNoAxesIsOnePointOfTheBaseConfiguration) {
  SweepSpec spec = parsed(std::string(kJob));
  ASSERT_EQ(spec.points.size(), 1u);
  EXPECT_EQ(spec.points[0].label, "the base configuration");
  EXPECT_TRUE(spec.axes.empty());
  EXPECT_FALSE(spec.seeded);
  ASSERT_TRUE(spec.plot.has_value());
  EXPECT_EQ(spec.plot->x, "point");
  EXPECT_EQ(spec.plot->y, "iops");
}

TEST(SweepSpec, TheSameTextGivesTheSameKeysAndEveryPointItsOwn) {
  SweepSpec a = parsed(kOrdered);
  SweepSpec b = parsed(kOrdered, "elsewhere/other-name.toml");
  ASSERT_EQ(a.points.size(), b.points.size());
  std::set<std::string> keys;
  for (size_t i = 0; i < a.points.size(); ++i) {
    EXPECT_EQ(a.points[i].key, b.points[i].key) << i;
    EXPECT_EQ(a.points[i].key.size(), 64u);
    EXPECT_EQ(a.points[i].key.find_first_not_of("0123456789abcdef"), std::string::npos);
    keys.insert(a.points[i].key);
  }
  EXPECT_EQ(keys.size(), a.points.size());
  EXPECT_EQ(a.points[0].identity["zonelab"], std::string(zonelab_build_id()));
}

std::string key_of(std::string_view text) {
  SweepSpec spec = parsed(text);
  EXPECT_EQ(spec.points.size(), 1u) << text;
  return spec.points.empty() ? std::string() : spec.points[0].key;
}

TEST(SweepSpec, AnyValueTheSeedOrThePresetChangesTheKey) {
  const std::string base = key_of(R"(preset = "small"
set = ["zns.max_active=10"]
seeds = [1]
[job]
rw = "write"
bs = "8k"
[grid]
"zns.max_open" = [4]
)");
  const std::string variants[] = {
      // the grid's value
      "preset = \"small\"\nset = [\"zns.max_active=10\"]\nseeds = [1]\n[job]\nrw = \"write\"\n"
      "bs = \"8k\"\n[grid]\n\"zns.max_open\" = [5]\n",
      // a `set` value
      "preset = \"small\"\nset = [\"zns.max_active=11\"]\nseeds = [1]\n[job]\nrw = \"write\"\n"
      "bs = \"8k\"\n[grid]\n\"zns.max_open\" = [4]\n",
      // a [job] value
      "preset = \"small\"\nset = [\"zns.max_active=10\"]\nseeds = [1]\n[job]\nrw = \"write\"\n"
      "bs = \"16k\"\n[grid]\n\"zns.max_open\" = [4]\n",
      // the seed
      "preset = \"small\"\nset = [\"zns.max_active=10\"]\nseeds = [2]\n[job]\nrw = \"write\"\n"
      "bs = \"8k\"\n[grid]\n\"zns.max_open\" = [4]\n",
      // no seed (the preset's)
      "preset = \"small\"\nset = [\"zns.max_active=10\"]\n[job]\nrw = \"write\"\n"
      "bs = \"8k\"\n[grid]\n\"zns.max_open\" = [4]\n",
      // the preset
      "preset = \"zssd-small\"\nset = [\"zns.max_active=10\"]\nseeds = [1]\n[job]\nrw = \"write\"\n"
      "bs = \"8k\"\n[grid]\n\"zns.max_open\" = [4]\n",
  };
  std::set<std::string> keys = {base};
  for (const std::string& text : variants) {
    std::string key = key_of(text);
    EXPECT_NE(key, base) << text;
    keys.insert(key);
  }
  EXPECT_EQ(keys.size(), std::size(variants) + 1);  // and none equals another
}

TEST(SweepSpec, AnExperimentPointsKeyDependsOnItsMemberQuickAndOverrides) {
  auto keys_of = [](std::string_view text) {
    std::vector<std::string> keys;
    for (const SweepPoint& p : parsed(text).points) keys.push_back(p.key);
    return keys;
  };
  auto base = keys_of("experiment = \"block-tax\"\nmembers = [\"capacity_and_wa\"]\n");
  auto quick =
      keys_of("experiment = \"block-tax\"\nquick = true\nmembers = [\"capacity_and_wa\"]\n");
  auto other = keys_of("experiment = \"block-tax\"\nmembers = [\"overwrite_throughput\"]\n");
  auto set = keys_of(
      "experiment = \"block-tax\"\nmembers = [\"capacity_and_wa\"]\nset = [\"zns.max_open=3\"]\n");
  ASSERT_EQ(base.size(), 1u);
  ASSERT_EQ(quick.size(), 1u);
  ASSERT_EQ(other.size(), 1u);
  ASSERT_EQ(set.size(), 1u);
  EXPECT_NE(base[0], quick[0]);
  EXPECT_NE(base[0], other[0]);
  EXPECT_NE(base[0], set[0]);
  // The member's point is the same point in the whole set's sweep.
  auto all = keys_of("experiment = \"block-tax\"\n");
  EXPECT_NE(std::find(all.begin(), all.end(), base[0]), all.end());
}

TEST(SweepSpec, TheKeyIsOfThePointsIdentityNotOfTheSpecAroundIt) {
  SweepSpec a = parsed(R"(name = "first"
[job]
rw = "write"
size = "1%"
[grid]
"job.iodepth" = [1, 4]
"zns.max_open" = [2, 3]
[plot]
x = "job.iodepth"
y = "iops"
)");
  SweepSpec b = parsed(R"(# another sweep of the same points
name = "second"
[job]
rw = "write"
size = "1%"
[grid]
"job.iodepth" = [1, 4]
"zns.max_open" = [2, 3]
[plot]
x = "zns.max_open"
y = "bw_MiB_s"
series = "job.iodepth"
logy = true
)",
                       "other.toml");
  EXPECT_EQ(a.name, "first");
  EXPECT_EQ(b.name, "second");
  ASSERT_EQ(a.points.size(), 4u);
  ASSERT_EQ(b.points.size(), 4u);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(a.points[i].key, b.points[i].key) << i;

  // A value given in `set`, as a [[points]] key or on a one-value grid axis
  // is the same configuration, so the same point.
  std::string in_set = key_of("set = [\"zns.max_open=3\"]\n[job]\nrw = \"write\"\nsize = \"1%\"\n");
  std::string in_list =
      key_of("[job]\nrw = \"write\"\nsize = \"1%\"\n[[points]]\n\"zns.max_open\" = 3\n");
  std::string in_grid =
      key_of("[job]\nrw = \"write\"\nsize = \"1%\"\n[grid]\n\"zns.max_open\" = [3]\n");
  EXPECT_EQ(in_set, in_list);
  EXPECT_EQ(in_list, in_grid);
}

// --- Refusals, each on its line ------------------------------------------------------

TEST(SweepSpec, RefusesUnknownKeysOnTheirLines) {
  EXPECT_TRUE(refused_at("preset = \"small\"\nbogus = 1\n[job]\nrw = \"write\"\n", 2,
                         "unknown key 'bogus'"));
  EXPECT_TRUE(refused_at("[job]\nrw = \"write\"\n[grid]\n\"zns.nope\" = [1, 2]\n", 4,
                         "unknown key 'zns.nope': not a configuration key"));
  EXPECT_TRUE(
      refused_at("[job]\nrw = \"write\"\nnope = 3\n", 3, "[job] 'nope': no such job option"));
  EXPECT_TRUE(
      refused_at("[job]\nrw = \"write\"\n[grid]\n\"job.iodepth\" = [1]\n\"job.nope\" = [1]\n", 5,
                 "'job.nope': no such job option"));
  EXPECT_TRUE(refused_at("[job]\nrw = \"write\"\n[[points]]\n\"job.name\" = \"x\"\n", 4,
                         "'job.name': no such job option"));
  EXPECT_TRUE(refused_at("[job]\nrw = \"write\"\n[plot]\nx = \"point\"\ny = \"iops\"\nz = 1\n", 6,
                         "[plot] 'z': not a plot key"));
  EXPECT_TRUE(refused_at("set = [\"job.iodepth=3\"]\n[job]\nrw = \"write\"\n", 1,
                         "'set': 'job.iodepth' is not a configuration key"));
  EXPECT_TRUE(
      refused_at("set = [\n  \"zns.max_open=3\",\n  \"nonsense\",\n]\n[job]\nrw = \"write\"\n", 3,
                 "'set': 'nonsense' is not KEY=VALUE"));
}

TEST(SweepSpec, RefusesAnUnknownPresetOnItsLineOrAtThePointNamingIt) {
  EXPECT_TRUE(refused_at("# a comment\npreset = \"nope\"\n[job]\nrw = \"write\"\n", 2,
                         "no preset 'nope' (the presets: small,"));
  EXPECT_TRUE(refused_at("[job]\nrw = \"write\"\n[grid]\npreset = [\"small\", \"nope\"]\n", 4,
                         "point 1 (preset=nope): unknown preset 'nope'"));
}

TEST(SweepSpec, RefusesABadConfigurationValueAtThePointNamingIt) {
  // check_device_config: max_open above max_active (14 on small).
  EXPECT_TRUE(refused_at(std::string(kJob) + "[grid]\n\"zns.max_open\" = [4, 100000]\n", 5,
                         "point 1 (zns.max_open=100000): zns.max_open (100000) must not exceed"));
  // apply_override: not a number.
  EXPECT_TRUE(refused_at(std::string(kJob) + "[grid]\n\"zns.max_open\" = [\"many\"]\n", 5,
                         "point 0 (zns.max_open=many): "));
  // A bad job value, in [job] and on an axis.
  EXPECT_TRUE(refused_at("[job]\nrw = \"write\"\niodepth = 0\n", 3,
                         "point 0 (the base configuration): iodepth: '0' is out of range"));
  EXPECT_TRUE(refused_at(std::string(kJob) + "[grid]\n\"job.iodepth\" = [1, 0]\n", 5,
                         "point 1 (job.iodepth=0): iodepth: '0' is out of range"));
  // An experiment sweep's override is checked as well.
  EXPECT_TRUE(refused_at("experiment = \"block-tax\"\n[grid]\n\"zns.max_open\" = [\"x\"]\n", 3,
                         "point 0 (overwrite_throughput zns.max_open=x): "));
}

TEST(SweepSpec, RefusesBadGridValuesAndSeeds) {
  EXPECT_TRUE(refused_at(std::string(kJob) + "[grid]\n\"zns.max_open\" = []\n", 5,
                         "[grid] 'zns.max_open': no values"));
  EXPECT_TRUE(refused_at(std::string(kJob) + "[grid]\n\"zns.max_open\" = [2, 3, 2]\n", 5,
                         "[grid] 'zns.max_open': a value is given twice"));
  // 2 and "2" are the same value to `--set`.
  EXPECT_TRUE(refused_at(std::string(kJob) + "[grid]\n\"zns.max_open\" = [2, \"2\"]\n", 5,
                         "a value is given twice"));
  EXPECT_TRUE(refused_at(std::string(kJob) + "[grid]\n\"zns.max_open\" = [[1]]\n", 5,
                         "a value is a number, a string or true/false"));
  EXPECT_TRUE(refused_at(std::string(kJob) + "[grid]\n\"zns.max_open\" = [nan]\n", 5,
                         "a value is a finite number"));
  EXPECT_TRUE(refused_at("seeds = [1, -1]\n" + std::string(kJob), 1, "'seeds' is a list"));
  EXPECT_TRUE(
      refused_at("\nseeds = [1, 2, 1]\n" + std::string(kJob), 2, "'seeds': a seed is given twice"));
  EXPECT_TRUE(refused_at("seeds = [\"1\"]\n" + std::string(kJob), 1, "'seeds' is a list"));
  EXPECT_TRUE(refused_at("seeds = [1.5]\n" + std::string(kJob), 1, "'seeds' is a list"));
  EXPECT_TRUE(refused_at("seeds = 1\n" + std::string(kJob), 1, "'seeds' is a list"));
  EXPECT_TRUE(refused_at("seeds = []\n" + std::string(kJob), 1, "'seeds': no seeds"));
  EXPECT_TRUE(refused_at(std::string(kJob) + "[grid]\nseed = [1, 2]\n", 5,
                         "'seed': give the seeds as seeds = [...]"));
}

TEST(SweepSpec, RefusesExperimentsThatCannotBeSwept) {
  EXPECT_TRUE(refused_at("experiment = \"nope\"\n", 1, "no experiment set 'nope' (the sets: "));
  EXPECT_TRUE(refused_at("experiment = 3\n", 1, "'experiment' is the name of a set"));
  EXPECT_TRUE(refused_at("name = \"x\"\nexperiment = \"rocksdb-zenfsplus\"\n", 2,
                         "'rocksdb-zenfsplus' reads the wall clock"));
  EXPECT_TRUE(refused_at("experiment = \"block-tax\"\nmembers = [\"capacity_and_wa\", \"nope\"]\n",
                         2, "'members': block-tax has no experiment 'nope'"));
  EXPECT_TRUE(refused_at("experiment = \"block-tax\"\n" + std::string(kJob), 2,
                         "[job]: an experiment sweep runs the set's members, not a job"));
  EXPECT_TRUE(refused_at("experiment = \"block-tax\"\npreset = \"small\"\n", 2,
                         "'preset': an experiment's members choose their presets"));
  EXPECT_TRUE(refused_at("experiment = \"block-tax\"\n[grid]\n\"job.iodepth\" = [1]\n", 3,
                         "an experiment sweep has no [job]"));
  EXPECT_TRUE(
      refused_at("members = [\"a\"]\n" + std::string(kJob), 1, "'members': only with experiment"));
}

TEST(SweepSpec, RefusesAKeyBothInSetAndOnAnAxis) {
  EXPECT_TRUE(refused_at(
      "set = [\"zns.max_open=4\"]\n" + std::string(kJob) + "[grid]\n\"zns.max_open\" = [2, 3]\n", 6,
      "'zns.max_open' is in `set` and varies too"));
  EXPECT_TRUE(refused_at(
      "set = [\"zns.max_open=4\"]\n" + std::string(kJob) + "[[points]]\n\"zns.max_open\" = 2\n", 6,
      "'zns.max_open' is in `set` and varies too"));
  EXPECT_TRUE(refused_at(
      std::string(kJob) + "[[points]]\n\"zns.max_open\" = 2\n[grid]\n\"zns.max_open\" = [3]\n", 7,
      "'zns.max_open' is both a [grid] axis and a [[points]] key"));
}

TEST(SweepSpec, RefusesAPlotOfAColumnTheSweepDoesNotHave) {
  EXPECT_TRUE(refused_at(std::string(kJob) + "[grid]\n\"job.iodepth\" = [1, 2]\n[plot]\n"
                                             "x = \"zns.max_open\"\ny = \"iops\"\n",
                         6, "[plot]: 'zns.max_open' is not a column (the columns: point, "));
  EXPECT_TRUE(refused_at(std::string(kJob) + "[plot]\nx = \"seed\"\ny = \"iops\"\n", 4,
                         "'seed' is not a column"));
  EXPECT_TRUE(refused_at(std::string(kJob) + "[plot]\nx = \"point\"\n", 4, "[plot]: give x and y"));
  // With seeds, "seed" is a column.
  EXPECT_TRUE(parse_sweep_spec_text("seeds = [1]\n" + std::string(kJob) +
                                        "[plot]\nx = \"seed\"\ny = \"lat_p99_us\"\n",
                                    kOrigin)
                  .ok());
}

TEST(SweepSpec, RefusesABenchSpecWithoutAJob) {
  EXPECT_TRUE(refused_at("preset = \"small\"\n", 0, "no [job]"));
  EXPECT_TRUE(refused_at("preset = \"small\"\n[job]\n", 0, "no [job]"));
  EXPECT_TRUE(refused_at("", 0, "no [job]"));
}

TEST(SweepSpec, RefusesTooManyPointsBeforeMakingThem) {
  auto values = [](int n) {
    std::string list = "[";
    for (int i = 1; i <= n; ++i) list += fmt::format("{}{}", i == 1 ? "" : ", ", i);
    return list + "]";
  };
  std::string huge =
      "seeds = [1, 2]\n" + std::string(kJob) + "[grid]\n\"job.iodepth\" = " + values(100) +
      "\n\"job.numjobs\" = " + values(100) + "\n\"job.rate_iops\" = " + values(100) + "\n";
  auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(refused_at(huge, 0, fmt::format("more than {} points", kSweepPointsMax)));
  // Just past the limit: 47^3 = 103823.
  std::string past = std::string(kJob) + "[grid]\n\"job.iodepth\" = " + values(47) +
                     "\n\"job.numjobs\" = " + values(47) + "\n\"job.rate_iops\" = " + values(47) +
                     "\n";
  EXPECT_TRUE(refused_at(past, 0, "more than"));
  // [[points]] x grid x seeds multiply too.
  std::string list = "seeds = " + values(50) + "\n" + std::string(kJob) +
                     "[grid]\n\"job.iodepth\" = " + values(100) +
                     "\n\"job.numjobs\" = " + values(30) + "\n";
  for (int i = 1; i <= 2; ++i) list += fmt::format("[[points]]\n\"zns.max_open\" = {}\n", i);
  EXPECT_TRUE(refused_at(list, 0, "more than"));
  auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_LT(elapsed, std::chrono::milliseconds(500)) << "refused after expanding?";

  std::string axis = std::string(kJob) + "[grid]\n\"job.rate_iops\" = " +
                     values(static_cast<int>(kSweepAxisValuesMax) + 1) + "\n";
  EXPECT_TRUE(refused_at(axis, 5, "more than the limit of"));
}

TEST(SweepSpec, AxesInAnInlineTableKeepTheOrderTheyAreWrittenIn) {
  SweepSpec spec = parsed(std::string(R"(grid = { "zns.max_open" = [2, 4], "job.iodepth" = [1, 2] }
points = [{ "zns.max_active" = 14, "job.bs" = "8k" }]
)") + std::string(kJob));
  EXPECT_EQ(spec.axes,
            (std::vector<std::string>{"zns.max_active", "job.bs", "zns.max_open", "job.iodepth"}));
  ASSERT_EQ(spec.points.size(), 4u);
  EXPECT_EQ(spec.points[1].label, "zns.max_active=14 job.bs=8k zns.max_open=2 job.iodepth=2");
}

TEST(SweepSpec, ALabelAndAMessageStayOnOneLineWhateverTheValuesHold) {
  EXPECT_TRUE(refused_at(std::string(kJob) + "[grid]\n\"job.zones\" = [\"0-1\\n2\"]\n", 5,
                         "point 0 (job.zones=0-1\\x0a2)"));
}

TEST(SweepSpec, RefusesAKeyGivenTwiceAndThePointTwice) {
  EXPECT_TRUE(refused_at(
      std::string("set = [\"zns.max_open=2\", \"zns.max_open=4\"]\n") + std::string(kJob), 1,
      "'set': 'zns.max_open' is set twice"));
  EXPECT_TRUE(refused_at(std::string(kJob) + "[grid]\n\"job.size\" = [\"1%\", \"2%\"]\n", 5,
                         "'job.size' is in [job] and varies too"));
  EXPECT_TRUE(refused_at(std::string(kJob) + "[grid]\n\"job.blocksize\" = [\"4k\"]\n"
                                             "[[points]]\n\"job.bs\" = \"8k\"\n",
                         5, "'job.bs' and 'job.blocksize' are the same job option"));
  EXPECT_TRUE(refused_at(std::string(kJob) + "[[points]]\n\"zns.max_open\" = 2\n"
                                             "[[points]]\n\"zns.max_open\" = 2\n",
                         0, "points 0 and 1 are the same (zns.max_open=2)"));
  // Values written differently that come to the same: one point, refused
  // (a job's size, a configuration's size, an experiment member's override).
  EXPECT_TRUE(refused_at(std::string(kJob) + "[grid]\n\"job.bs\" = [\"4k\", \"8k\", \"4096\"]\n", 0,
                         "points 0 and 2 are the same configuration (job.bs=4k and job.bs=4096)"));
  EXPECT_TRUE(refused_at(std::string(kJob) + "[grid]\n\"zns.zasl\" = [\"512KiB\", \"524288\"]\n", 0,
                         "points 0 and 1 are the same configuration"));
  EXPECT_TRUE(
      refused_at("experiment = \"block-tax\"\nmembers = [\"overwrite_throughput\"]\n"
                 "[grid]\n\"zns.zasl\" = [\"1MiB\", \"1024KiB\"]\n",
                 0, "points 0 and 1 are the same configuration"));
  // Different values stay different points.
  SweepSpec spec = parsed(std::string(kJob) + "[grid]\n\"job.bs\" = [\"4k\", \"8k\"]\n");
  EXPECT_EQ(spec.points.size(), 2u);
}

TEST(SweepSpec, AMessageNamesTheLineOfTheKeyItNamesNotOfOneInsideIt) {
  // "size" is inside "zns.zone_size": the message names the zone size.
  auto spec = parse_sweep_spec_text(std::string(kJob) + "[grid]\n\"zns.zone_size\" = [\"3MiB\"]\n",
                                    kOrigin);
  ASSERT_FALSE(spec.ok());
  EXPECT_TRUE(spec.error().starts_with("t.toml:5: point 0")) << spec.error();
}

TEST(SweepSpec, RefusesMalformedToml) {
  EXPECT_TRUE(refused_at("[job\nrw = \"write\"\n", 1, "malformed TOML"));
  EXPECT_TRUE(refused_at("[job]\nrw = \"write\"\nrw = \"read\"\n", 3, "malformed TOML"));
  EXPECT_TRUE(refused_at("seeds = [1,\n", 1, "malformed TOML"));
}

TEST(SweepSpec, RefusesABadName) {
  EXPECT_TRUE(refused_at("\nname = \"../x\"\n" + std::string(kJob), 2, "'name': 1 to 64 letters"));
  EXPECT_TRUE(refused_at("name = \"\"\n" + std::string(kJob), 1, "'name'"));
  // A spec file whose stem is no valid name is named "sweep".
  EXPECT_EQ(parsed(kJob, "dir/.hidden.toml").name, "sweep");
}

// --- Running points ---------------------------------------------------------------

// Reads and writes at random on the block interface: what it reads and
// writes depends on the seed.
constexpr std::string_view kRandom = R"(preset = "small"
set = ["interface=block"]
seeds = [1, 2]
[job]
rw = "randrw"
bs = "4k"
iodepth = 4
size = "1%"
)";

TEST(SweepPoints, ABenchPointIsDeterministicAndRunsWithItsSeed) {
  SweepSpec spec = parsed(kRandom);
  ASSERT_EQ(spec.points.size(), 2u);
  auto first = run_sweep_point(spec, 0);
  ASSERT_TRUE(first.ok()) << first.error();
  auto again = run_sweep_point(spec, 0);
  ASSERT_TRUE(again.ok()) << again.error();
  EXPECT_EQ(*first, *again);
  auto other_seed = run_sweep_point(spec, 1);
  ASSERT_TRUE(other_seed.ok()) << other_seed.error();
  EXPECT_NE(*first, *other_seed);

  Json doc = Json::parse(*first);
  ASSERT_EQ(doc["jobs"].size(), 1u);
  const Json& job = doc["jobs"][0];
  EXPECT_EQ(job["name"], "t");
  EXPECT_EQ(job["rw"], "randrw");
  EXPECT_EQ(job["errors"], 0);
  EXPECT_GT(job["ops"].get<uint64_t>(), 0u);
  EXPECT_GT(doc["virtual_time_ns"].get<uint64_t>(), 0u);
  EXPECT_TRUE(doc.contains("device"));
  // The seeds read different mixes.
  EXPECT_NE(job["read"]["ops"], Json::parse(*other_seed)["jobs"][0]["read"]["ops"]);
}

TEST(SweepPoints, ASeedIsExactlyTheConfigurationsSeed) {
  // Without seeds a point runs with the preset's seed: the same result as
  // the point that names that seed (a different key, the same run).
  auto preset = preset_config("small");
  ASSERT_TRUE(preset.ok());
  std::string unseeded(kRandom);
  unseeded.replace(unseeded.find("seeds = [1, 2]"), 14, "");
  std::string seeded(kRandom);
  seeded.replace(seeded.find("seeds = [1, 2]"), 14, fmt::format("seeds = [{}]", preset->seed));
  SweepSpec a = parsed(unseeded);
  SweepSpec b = parsed(seeded);
  ASSERT_EQ(a.points.size(), 1u);
  ASSERT_EQ(b.points.size(), 1u);
  EXPECT_NE(a.points[0].key, b.points[0].key);
  auto ra = run_sweep_point(a, 0);
  auto rb = run_sweep_point(b, 0);
  ASSERT_TRUE(ra.ok()) << ra.error();
  ASSERT_TRUE(rb.ok()) << rb.error();
  EXPECT_EQ(*ra, *rb);
}

TEST(SweepPoints, AnAxisReachesTheJobAndTheDevice) {
  SweepSpec spec = parsed(R"(preset = "small"
[job]
rw = "write"
size = "1%"
[grid]
"job.iodepth" = [1, 8]
)");
  ASSERT_EQ(spec.points.size(), 2u);
  auto qd1 = run_sweep_point(spec, 0);
  auto qd8 = run_sweep_point(spec, 1);
  ASSERT_TRUE(qd1.ok()) << qd1.error();
  ASSERT_TRUE(qd8.ok()) << qd8.error();
  EXPECT_EQ(Json::parse(*qd1)["jobs"][0]["iodepth"], 1);
  EXPECT_EQ(Json::parse(*qd8)["jobs"][0]["iodepth"], 8);

  // Outside the spec's points: an error naming the point count.
  auto none = run_sweep_point(spec, 2);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().find("no point 2 (it has 2, from 0)"), std::string::npos) << none.error();
}

const Json* comparison_named(const Json& doc, std::string_view quantity) {
  for (const Json& c : doc["comparison"]) {
    if (c.value("quantity", std::string()) == quantity) return &c;
  }
  return nullptr;
}

TEST(SweepPoints, AnExperimentPointRunsItsMemberWithTheOverrides) {
  // capacity_and_wa is block-tax's quickest member; fewer blocks per plane
  // than its own 96 make it quicker still, and change the block interface's
  // capacity: 80 / 1.07 cut to 74 zones, 64 / 1.07 to 59.
  SweepSpec spec = parsed(R"(experiment = "block-tax"
quick = true
members = ["capacity_and_wa"]
[grid]
"flash.blocks_per_plane" = [80, 64]
)");
  ASSERT_EQ(spec.points.size(), 2u);
  EXPECT_TRUE(spec.quick);
  auto big = run_sweep_point(spec, 0);
  ASSERT_TRUE(big.ok()) << big.error();
  auto small = run_sweep_point(spec, 1);
  ASSERT_TRUE(small.ok()) << small.error();
  EXPECT_NE(*big, *small);
  Json a = Json::parse(*big);
  Json b = Json::parse(*small);
  EXPECT_EQ(a["set"], "block-tax");
  EXPECT_EQ(a["experiment"], "capacity_and_wa");
  EXPECT_EQ(a["quick"], true);
  EXPECT_FALSE(a.contains("plot"));
  EXPECT_FALSE(a.contains("files"));
  const Json* ca = comparison_named(a, "block 7% OP host capacity, % of media");
  const Json* cb = comparison_named(b, "block 7% OP host capacity, % of media");
  ASSERT_NE(ca, nullptr) << a.dump();
  ASSERT_NE(cb, nullptr) << b.dump();
  EXPECT_DOUBLE_EQ((*ca)["measured"].get<double>(), 100.0 * 74 / 80);
  EXPECT_DOUBLE_EQ((*cb)["measured"].get<double>(), 100.0 * 59 / 64);
  // The scope ends with the point.
  auto after = preset_with("small", {});
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->flash.blocks_per_plane, preset_config("small")->flash.blocks_per_plane);
}

// Members that keep their runs for reuse within a process (block-tax's
// overwrite runs, zn540's study, confzns's curves) keep them per point's
// overrides: two points in one process (a serial sweep, a Dask worker) are
// each run with their own configuration, and each gives what it gives
// alone, whatever ran before it.
TEST(SweepPoints, APointInAProcessThatRanAnotherGetsItsOwnResult) {
  SweepSpec spec = parsed(R"(experiment = "block-tax"
quick = true
members = ["overwrite_throughput"]
seeds = [1, 2]
)");
  ASSERT_EQ(spec.points.size(), 2u);
  auto first = run_sweep_point(spec, 0);
  ASSERT_TRUE(first.ok()) << first.error();
  auto second = run_sweep_point(spec, 1);
  ASSERT_TRUE(second.ok()) << second.error();
  // The measured rows, not the parameters (which name the seed either way).
  Json a = Json::parse(*first);
  Json b = Json::parse(*second);
  EXPECT_NE(a["rows"], b["rows"]) << "the seed-2 point was given the seed-1 point's runs";
  auto again = run_sweep_point(spec, 0);
  ASSERT_TRUE(again.ok()) << again.error();
  EXPECT_EQ(*first, *again);
}

TEST(PresetOverridesScope, AppliesItsOverridesAfterTheExperimentsOwnWhileAlive) {
  auto base = preset_config("small");
  ASSERT_TRUE(base.ok());
  ASSERT_NE(base->zns.max_open, 3u);
  auto outside = preset_with("small", {});
  ASSERT_TRUE(outside.ok());
  EXPECT_EQ(outside->zns.max_open, base->zns.max_open);
  {
    PresetOverridesScope scope({"zns.max_open=3", "seed=77"});
    auto inside = preset_with("small", {});
    ASSERT_TRUE(inside.ok()) << inside.error();
    EXPECT_EQ(inside->zns.max_open, 3u);
    EXPECT_EQ(inside->seed, 77u);
    // The scope's come after the experiment's own.
    auto own = preset_with("small", {"zns.max_open=5", "zns.max_active=9"});
    ASSERT_TRUE(own.ok()) << own.error();
    EXPECT_EQ(own->zns.max_open, 3u);
    EXPECT_EQ(own->zns.max_active, 9u);
    // Another thread has no scope.
    uint64_t other_thread = 0;
    std::thread([&] { other_thread = preset_with("small", {}).value().zns.max_open; }).join();
    EXPECT_EQ(other_thread, base->zns.max_open);
  }
  auto after = preset_with("small", {});
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->zns.max_open, base->zns.max_open);
  EXPECT_EQ(after->seed, base->seed);
}

TEST(PresetOverridesScope, NestedScopesRestoreTheOuterOneOnExit) {
  auto base = preset_config("small");
  ASSERT_TRUE(base.ok());
  {
    PresetOverridesScope outer({"zns.max_open=3"});
    {
      PresetOverridesScope inner({"zns.max_open=5"});
      EXPECT_EQ(preset_with("small", {})->zns.max_open, 5u);
    }
    EXPECT_EQ(preset_with("small", {})->zns.max_open, 3u);
    {
      PresetOverridesScope empty(std::vector<std::string>{});
      EXPECT_EQ(preset_with("small", {})->zns.max_open, base->zns.max_open);
    }
    EXPECT_EQ(preset_with("small", {})->zns.max_open, 3u);
  }
  EXPECT_EQ(preset_with("small", {})->zns.max_open, base->zns.max_open);
}

TEST(PresetOverridesScope, ABadOverrideFailsPresetWith) {
  PresetOverridesScope scope({"zns.nope=1"});
  auto config = preset_with("small", {});
  ASSERT_FALSE(config.ok());
  EXPECT_NE(config.error().find("zns.nope"), std::string::npos) << config.error();
}

// --- The point cache ----------------------------------------------------------

class TempDir : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "zonelab-sweep-test-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
  }

  static std::string read(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  static void write(const fs::path& path, std::string_view text) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
  }
  // Every file under the directory, relative to it.
  std::set<std::string> listing() const {
    std::set<std::string> out;
    for (const auto& entry : fs::recursive_directory_iterator(dir_)) {
      if (!entry.is_directory()) out.insert(fs::relative(entry.path(), dir_).string());
    }
    return out;
  }

  fs::path dir_;
};

using PointCache = TempDir;

const SweepSpec& two_points() {
  static const SweepSpec spec = parsed("seeds = [1, 2]\n" + std::string(kJob));
  return spec;
}

TEST_F(PointCache, AStoredPointIsAHitWithTheSameBytes) {
  zonelab::PointCache cache(dir_ / "cache");
  const SweepPoint& p = two_points().points[0];
  auto miss = cache.lookup(p);
  EXPECT_FALSE(miss.result.has_value());
  EXPECT_EQ(miss.problem, "");

  const std::string result = R"({"jobs":[],"x":"é\n\u0000"})";
  auto stored = cache.store(p, result);
  ASSERT_TRUE(stored.ok()) << stored.error();
  EXPECT_EQ(cache.path_of(p), dir_ / "cache" / p.key.substr(0, 2) / (p.key + ".json"));
  auto hit = cache.lookup(p);
  ASSERT_TRUE(hit.result.has_value()) << hit.problem;
  EXPECT_EQ(*hit.result, result);
  EXPECT_EQ(hit.problem, "");
  // The other point is not there.
  auto other = cache.lookup(two_points().points[1]);
  EXPECT_FALSE(other.result.has_value());
  EXPECT_EQ(other.problem, "");
  // One file, no temporary left beside it.
  EXPECT_EQ(listing(), (std::set<std::string>{
                           fs::path("cache").append(p.key.substr(0, 2)).append(p.key + ".json")}));

  // A second store replaces the first.
  ASSERT_TRUE(cache.store(p, "{\"second\":1}").ok());
  EXPECT_EQ(cache.lookup(p).result, std::optional<std::string>("{\"second\":1}"));
  EXPECT_EQ(listing().size(), 1u);
}

TEST_F(PointCache, ADamagedOrForeignEntryIsAMissWithAProblemAndAStoreRepairsIt) {
  zonelab::PointCache cache(dir_);
  const SweepPoint& p = two_points().points[0];
  const SweepPoint& q = two_points().points[1];
  const std::string result = "{\"jobs\":[{\"name\":\"t\"}]}";
  ASSERT_TRUE(cache.store(p, result).ok());
  ASSERT_TRUE(cache.store(q, "{\"jobs\":[]}").ok());
  const fs::path path = cache.path_of(p);
  const std::string good = read(path);
  ASSERT_FALSE(good.empty());

  Json altered = Json::parse(good);
  altered["result"] = "{\"jobs\":[{\"name\":\"u\"}]}";
  Json not_ours = Json::parse(good);
  not_ours["format"] = "something else";
  struct Damage {
    const char* what;
    std::string text;
  };
  const Damage damages[] = {
      {"truncated", good.substr(0, good.size() / 2)},
      {"empty", ""},
      {"garbage", "\x01\x02 not json at all \xff"},
      {"a JSON array", "[1, 2]"},
      {"another format", not_ours.dump()},
      {"an altered result", altered.dump()},
      {"another point's entry", read(cache.path_of(q))},
  };
  for (const Damage& damage : damages) {
    SCOPED_TRACE(damage.what);
    write(path, damage.text);
    auto lookup = cache.lookup(p);
    EXPECT_FALSE(lookup.result.has_value());
    EXPECT_NE(lookup.problem, "");
    ASSERT_TRUE(cache.store(p, result).ok());
    auto repaired = cache.lookup(p);
    EXPECT_EQ(repaired.result, std::optional<std::string>(result)) << repaired.problem;
    EXPECT_EQ(repaired.problem, "");
  }
  write(path, altered.dump());
  EXPECT_EQ(cache.lookup(p).problem, "its result does not match its digest");
  write(path, read(cache.path_of(q)));
  EXPECT_EQ(cache.lookup(p).problem, "it holds another point");
  write(path, not_ours.dump());
  EXPECT_EQ(cache.lookup(p).problem, "not a zonelab sweep point");
  write(path, "garbage");
  EXPECT_EQ(cache.lookup(p).problem, "not a JSON document");
  // The other point's entry was never touched.
  EXPECT_EQ(cache.lookup(q).result, std::optional<std::string>("{\"jobs\":[]}"));
  for (const std::string& name : listing()) {
    EXPECT_EQ(name.find(".tmp"), std::string::npos) << name;
  }
}

TEST_F(PointCache, ADirectoryInPlaceOfTheEntryIsAProblemAndAStoreSaysWhy) {
  zonelab::PointCache cache(dir_);
  const SweepPoint& p = two_points().points[0];
  fs::create_directories(cache.path_of(p));
  auto lookup = cache.lookup(p);
  EXPECT_FALSE(lookup.result.has_value());
  EXPECT_EQ(lookup.problem, "not a regular file");
  // A store does not remove what is in the way: it fails, naming the path,
  // and leaves no temporary file.
  auto stored = cache.store(p, "{}");
  ASSERT_FALSE(stored.ok());
  EXPECT_NE(stored.error().find(cache.path_of(p).string()), std::string::npos) << stored.error();
  EXPECT_TRUE(listing().empty());
  // Once it is gone a store works.
  fs::remove(cache.path_of(p));
  ASSERT_TRUE(cache.store(p, "{}").ok());
  EXPECT_EQ(cache.lookup(p).result, std::optional<std::string>("{}"));
}

TEST(PointCacheDir, DefaultsToXdgCacheHomeElseHome) {
  // Read the environment without changing it for other tests.
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  fs::path dir = zonelab::PointCache::default_dir();
  EXPECT_EQ(dir.filename(), "sweep");
  EXPECT_EQ(dir.parent_path().filename(), "zonelab");
  if (xdg != nullptr && xdg[0] == '/') {
    EXPECT_EQ(dir, fs::path(xdg) / "zonelab" / "sweep");
  }
}

// --- The sweep's files ---------------------------------------------------------

constexpr std::string_view kGrid = R"(name = "grid"
seeds = [5]
[job]
rw = "write"
size = "1%"
[grid]
"zns.max_open" = [2, 4]
"job.iodepth" = [1, 8]
)";

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

const char* const kBenchColumns =
    "job,rw,ops,iops,bw_MiB_s,lat_mean_us,lat_p50_us,lat_p99_us,lat_p999_us,write_amplification,"
    "errors";

TEST(SweepFiles, OneRowPerPointInPointOrderWhateverOrderTheyRan) {
  SweepSpec spec = parsed(kGrid);
  ASSERT_EQ(spec.points.size(), 4u);
  std::vector<std::string> forward(4), backward(4);
  for (size_t i = 0; i < 4; ++i) {
    auto r = run_sweep_point(spec, i);
    ASSERT_TRUE(r.ok()) << r.error();
    forward[i] = *r;
  }
  for (size_t i = 4; i-- > 0;) {
    auto r = run_sweep_point(spec, i);
    ASSERT_TRUE(r.ok()) << r.error();
    backward[i] = *r;
  }
  auto files = sweep_files(spec, forward);
  ASSERT_TRUE(files.ok()) << files.error();
  auto again = sweep_files(spec, backward);
  ASSERT_TRUE(again.ok()) << again.error();
  EXPECT_EQ(files->csv, again->csv);
  EXPECT_EQ(files->json, again->json);
  EXPECT_TRUE(files->plottable);

  std::vector<std::string> lines = lines_of(files->csv);
  ASSERT_EQ(lines.size(), 5u) << files->csv;
  EXPECT_EQ(lines[0], std::string("point,zns.max_open,job.iodepth,seed,") + kBenchColumns);
  const char* heads[] = {"0,2,1,5,grid,write,", "1,2,8,5,grid,write,", "2,4,1,5,grid,write,",
                         "3,4,8,5,grid,write,"};
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_TRUE(lines[i + 1].starts_with(heads[i])) << lines[i + 1];
    EXPECT_TRUE(lines[i + 1].ends_with(",0")) << lines[i + 1];  // no errors
  }
  // Each row holds its own point's result.
  for (size_t i = 0; i < 4; ++i) {
    Json result = Json::parse(forward[i]);
    std::string ops = std::to_string(result["jobs"][0]["ops"].get<uint64_t>());
    EXPECT_NE(lines[i + 1].find(",write," + ops + ","), std::string::npos) << lines[i + 1];
  }

  Json doc = Json::parse(files->json);
  EXPECT_EQ(doc["sweep"], "grid");
  EXPECT_EQ(doc["kind"], "bench");
  EXPECT_EQ(doc["axes"], Json::array({"zns.max_open", "job.iodepth"}));
  EXPECT_EQ(doc["columns"].size(), 4u + 11u);
  ASSERT_EQ(doc["rows"].size(), 4u);
  ASSERT_EQ(doc["points"].size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(doc["points"][i]["index"], i);
    EXPECT_EQ(doc["points"][i]["key"], spec.points[i].key);
    EXPECT_EQ(doc["points"][i]["seed"], 5);
    EXPECT_EQ(doc["points"][i]["result"], Json::parse(forward[i]));
    EXPECT_EQ(doc["rows"][i][0], i);
  }
  // The default plot: the first axis against iops, a series per value of the second.
  EXPECT_EQ(doc["plot"]["x"], "zns.max_open");
  EXPECT_EQ(doc["plot"]["y"], "iops");
  EXPECT_EQ(doc["plot"]["series"], "job.iodepth");
  EXPECT_EQ(doc["files"]["csv"], "grid.csv");
}

TEST(SweepFiles, TheSeedColumnIsThereOnlyWithSeeds) {
  SweepSpec spec = parsed("[job]\nrw = \"write\"\n[grid]\n\"job.iodepth\" = [2]\n");
  ASSERT_EQ(spec.points.size(), 1u);
  Json result = {{"jobs", Json::array({{{"name", "t"}, {"rw", "write"}, {"ops", 3}}})},
                 {"device", {{"write_amplification", 1.5}}}};
  auto files = sweep_files(spec, {result.dump()});
  ASSERT_TRUE(files.ok()) << files.error();
  std::vector<std::string> lines = lines_of(files->csv);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], std::string("point,job.iodepth,") + kBenchColumns);
  EXPECT_EQ(lines[1], "0,2,t,write,3,0,0,0,0,0,0,1.5,0");
}

TEST(SweepFiles, AnExperimentSweepHasARowPerComparison) {
  SweepSpec spec =
      parsed("experiment = \"block-tax\"\nmembers = [\"capacity_and_wa\"]\nseeds = [1, 2]\n");
  ASSERT_EQ(spec.points.size(), 2u);
  Json result = {
      {"comparison", Json::array({{{"quantity", "a, b"},
                                   {"unit", "%"},
                                   {"paper", 1.5},
                                   {"measured", 2},
                                   {"kind", "emerged"}},
                                  {{"quantity", "c"}, {"unit", "x"}, {"measured", 3}}})}};
  auto files = sweep_files(spec, {result.dump(), result.dump()});
  ASSERT_TRUE(files.ok()) << files.error();
  std::vector<std::string> lines = lines_of(files->csv);
  ASSERT_EQ(lines.size(), 5u) << files->csv;
  EXPECT_EQ(lines[0], "point,seed,member,quantity,unit,paper,measured,kind");
  EXPECT_EQ(lines[1], "0,1,capacity_and_wa,\"a, b\",%,1.5,2,emerged");
  EXPECT_EQ(lines[2], "0,1,capacity_and_wa,c,x,,3,");
  EXPECT_EQ(lines[3], "1,2,capacity_and_wa,\"a, b\",%,1.5,2,emerged");
  EXPECT_FALSE(files->plottable);
  Json doc = Json::parse(files->json);
  EXPECT_EQ(doc["kind"], "experiment");
  EXPECT_EQ(doc["experiment"], "block-tax");
  EXPECT_FALSE(doc.contains("plot"));
}

TEST(SweepFiles, AResultThatIsNotJsonIsAnErrorNamingItsPoint) {
  SweepSpec spec = parsed(kGrid);
  ASSERT_EQ(spec.points.size(), 4u);
  std::vector<std::string> results(4, "{\"jobs\":[]}");
  results[2] = "{\"jobs\": [";
  auto files = sweep_files(spec, results);
  ASSERT_FALSE(files.ok());
  EXPECT_EQ(files.error(),
            "point 2 (zns.max_open=4 job.iodepth=1 seed=5): its result is not a JSON "
            "document");
  results[2] = "[1]";
  files = sweep_files(spec, results);
  ASSERT_FALSE(files.ok());
  EXPECT_NE(files.error().find("point 2 ("), std::string::npos) << files.error();
  // One result per point.
  results.pop_back();
  files = sweep_files(spec, results);
  ASSERT_FALSE(files.ok());
  EXPECT_EQ(files.error(), "3 results for 4 points");
}

TEST(SweepFiles, AResultOfTheWrongShapeIsAnErrorNamingItsPointNotACrash) {
  SweepSpec spec = parsed(kGrid);
  ASSERT_EQ(spec.points.size(), 4u);
  for (const char* bad :
       {R"({"jobs":5})", R"({"jobs":[{"name":1}]})", R"({"jobs":[7]})", R"({"jobs":[{"ops":-3}]})",
        R"({"jobs":[{"iops":"fast"}]})", R"({"jobs":[{"lat_ns":[1]}]})",
        R"({"jobs":[{"ops":1e999}]})", R"({"device":{"write_amplification":true},"jobs":[{}]})"}) {
    std::vector<std::string> results(4, "{\"jobs\":[]}");
    results[1] = bad;
    auto files = sweep_files(spec, results);
    ASSERT_FALSE(files.ok()) << bad;
    EXPECT_TRUE(
        files.error().starts_with("point 1 (zns.max_open=2 job.iodepth=8 seed=5): its "
                                  "result "))
        << bad << ": " << files.error();
  }
}

using SweepFilesOut = TempDir;

TEST_F(SweepFilesOut, WritesExactlyTheCsvAndTheJsonIntoADirectoryItMakes) {
  SweepSpec spec = parsed(kGrid);
  std::vector<std::string> results(spec.points.size(), "{\"jobs\":[]}");
  auto files = sweep_files(spec, results);
  ASSERT_TRUE(files.ok()) << files.error();
  fs::path out = dir_ / "a" / "b";
  auto written = write_sweep_files(spec, *files, out);
  ASSERT_TRUE(written.ok()) << written.error();
  EXPECT_EQ(*written, out / "grid.json");
  EXPECT_EQ(listing(), (std::set<std::string>{"a/b/grid.csv", "a/b/grid.json"}));
  EXPECT_EQ(read(out / "grid.csv"), files->csv);
  EXPECT_EQ(read(out / "grid.json"), files->json);
  // Again over them: the same two files.
  ASSERT_TRUE(write_sweep_files(spec, *files, out).ok());
  EXPECT_EQ(listing(), (std::set<std::string>{"a/b/grid.csv", "a/b/grid.json"}));
}

TEST_F(SweepFilesOut, RefusesASymlinkInPlaceOfItsFileAndAFileInPlaceOfTheDirectory) {
  SweepSpec spec = parsed(kGrid);
  std::vector<std::string> results(spec.points.size(), "{\"jobs\":[]}");
  auto files = sweep_files(spec, results);
  ASSERT_TRUE(files.ok()) << files.error();
  fs::path out = dir_ / "out";
  fs::create_directories(out);
  write(dir_ / "target", "keep me");
  fs::create_symlink(dir_ / "target", out / "grid.csv");
  auto written = write_sweep_files(spec, *files, out);
  ASSERT_FALSE(written.ok());
  EXPECT_NE(written.error().find("grid.csv is a symlink"), std::string::npos) << written.error();
  EXPECT_EQ(read(dir_ / "target"), "keep me");
  EXPECT_TRUE(fs::is_symlink(out / "grid.csv"));

  write(dir_ / "plain", "x");
  auto not_dir = write_sweep_files(spec, *files, dir_ / "plain");
  ASSERT_FALSE(not_dir.ok());
  EXPECT_EQ(read(dir_ / "plain"), "x");
}

}  // namespace
}  // namespace zonelab
