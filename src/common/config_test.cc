// Configuration: the shipped presets, TOML documents, `--set key=value`
// overrides and the printed form. Bad input is an error that names what to
// fix (the key, the file and line), and a failed load changes nothing.
#include "zonelab/config.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "zns/zone_layout.h"

namespace zonelab {
namespace {

constexpr uint64_t kMiB = 1024 * 1024;
constexpr uint64_t kGiB = 1024 * kMiB;

bool contains(const std::string& text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

Config preset(std::string_view name) {
  auto config = preset_config(name);
  EXPECT_TRUE(config.ok()) << config.error();
  return config.ok() ? config.value() : default_config();
}

// ---------------------------------------------------------------------------
// Presets

TEST(Config, PresetsAreTheContractPresets) {
  EXPECT_EQ(preset_names(), (std::vector<std::string>{"small", "confznspp", "zn540", "zssd-small",
                                                      "zenfsplus", "flexzns"}));
}

TEST(Config, EveryPresetLoadsAndMakesAValidLayout) {
  for (const std::string& name : preset_names()) {
    SCOPED_TRACE(name);
    auto config = preset_config(name);
    ASSERT_TRUE(config.ok()) << config.error();
    EXPECT_EQ(config->interface, "zns");
    auto layout = ZoneLayout::make(*config);
    EXPECT_TRUE(layout.ok()) << layout.error();
  }
}

TEST(Config, TheDefaultIsThePresetSmall) {
  EXPECT_EQ(config_to_json(default_config()), config_to_json(preset("small")));
}

TEST(Config, AnUnknownPresetIsRefusedWithTheList) {
  auto config = preset_config("tiny");
  ASSERT_FALSE(config.ok());
  EXPECT_TRUE(contains(config.error(), "tiny")) << config.error();
  for (const std::string& name : preset_names()) {
    EXPECT_TRUE(contains(config.error(), name)) << config.error();
  }
}

TEST(Config, PresetSmallIsAQuickFullUnitDeviceWithCapacityBelowZoneSize) {
  Config c = preset("small");
  ZoneLayout l = ZoneLayout::make(c).value();
  EXPECT_EQ(l.units_per_zone(),
            c.flash.channels * c.flash.dies_per_channel * c.flash.planes_per_die);
  EXPECT_LT(l.zone_capacity_lbas(), l.zone_size_lbas());
  EXPECT_LE(l.capacity_lbas() * l.lba_size_bytes(), 8 * kGiB);
}

TEST(Config, PresetZssdSmallHas29172ZonesOf72MiB) {
  Config c = preset("zssd-small");
  ZoneLayout l = ZoneLayout::make(c).value();
  EXPECT_EQ(l.zone_count(), 29172u);
  EXPECT_EQ(l.zone_capacity_lbas() * l.lba_size_bytes(), 72 * kMiB);
  EXPECT_EQ(l.zone_size_lbas() * l.lba_size_bytes(), 72 * kMiB);
  EXPECT_EQ(l.units_per_zone(), 1u);  // single-unit zones
}

TEST(Config, PresetConfZnsPPHas48ZonesOf88Blocks) {
  Config c = preset("confznspp");
  ZoneLayout l = ZoneLayout::make(c).value();
  EXPECT_EQ(l.zone_count(), 48u);
  EXPECT_EQ(l.units_per_zone(), 4u);
  EXPECT_EQ(l.blocks_per_zone_unit(), 22u);
  EXPECT_EQ(l.units_per_zone() * l.blocks_per_zone_unit(), 88u);
  EXPECT_EQ(l.zone_capacity_lbas() * l.lba_size_bytes(), 1056 * kMiB);
  EXPECT_EQ(c.zns.max_open, 14u);
  EXPECT_EQ(c.zns.max_active, 14u);
}

TEST(Config, PresetZn540HasLargeZonesAndLimitsOf14) {
  Config c = preset("zn540");
  ZoneLayout l = ZoneLayout::make(c).value();
  EXPECT_EQ(c.zns.max_open, 14u);
  EXPECT_EQ(c.zns.max_active, 14u);
  EXPECT_EQ(l.zone_capacity_lbas() * l.lba_size_bytes(), 1077 * kMiB);
  EXPECT_EQ(l.zone_size_lbas() * l.lba_size_bytes(), 2 * kGiB);
}

TEST(Config, PresetFlexZnsHas2GiBSuperblockZones) {
  Config c = preset("flexzns");
  ZoneLayout l = ZoneLayout::make(c).value();
  EXPECT_EQ(l.zone_count(), 128u);
  EXPECT_EQ(l.zone_size_lbas() * l.lba_size_bytes(), 2 * kGiB);
  EXPECT_EQ(l.zone_capacity_lbas() * l.lba_size_bytes(), 2016 * kMiB);
}

// ---------------------------------------------------------------------------
// Keys

TEST(Config, TheContractKeysExist) {
  std::set<std::string> names;
  for (const ConfigKeyInfo& key : config_keys()) names.insert(key.name);
  for (const char* key : {"interface",
                          "seed",
                          "flash.channels",
                          "flash.dies_per_channel",
                          "flash.planes_per_die",
                          "flash.blocks_per_plane",
                          "flash.pages_per_block",
                          "flash.page_size",
                          "flash.read_latency",
                          "flash.program_latency",
                          "flash.erase_latency",
                          "flash.transfer_latency",
                          "host.lba_size",
                          "host.command_overhead",
                          "host.link_bandwidth",
                          "host.queue_depth",
                          "zns.channels_per_zone",
                          "zns.dies_per_zone",
                          "zns.zone_capacity",
                          "zns.zone_size",
                          "zns.zone_count",
                          "zns.max_open",
                          "zns.max_active",
                          "zns.zasl",
                          "store.backing"}) {
    EXPECT_EQ(names.count(key), 1u) << key;
  }
}

TEST(Config, EveryKeyHasAKindAndADescription) {
  const std::set<std::string> kinds = {"count",  "size", "time",    "rate",       "bool",
                                       "choice", "text", "percent", "zone-format"};
  std::set<std::string> names;
  for (const ConfigKeyInfo& key : config_keys()) {
    SCOPED_TRACE(key.name);
    EXPECT_TRUE(names.insert(key.name).second) << "declared twice";
    EXPECT_EQ(kinds.count(key.kind), 1u) << key.kind;
    EXPECT_FALSE(key.description.empty());
  }
}

// ---------------------------------------------------------------------------
// TOML

TEST(Config, TomlSetsKeysWithUnits) {
  Config c = default_config();
  Outcome outcome = apply_toml(c, R"(
seed = 7
[flash]
page_size = "48KiB"
read_latency = "3.5ms"
program_latency = 450000
[host]
link_bandwidth = "1.2GB/s"
[zns]
zone_capacity = "72MB"
max_open = 3
[store]
backing = "memory"
)",
                               "test.toml");
  ASSERT_TRUE(outcome.ok()) << outcome.error();
  EXPECT_EQ(c.seed, 7u);
  EXPECT_EQ(c.flash.page_size_bytes, 48u * 1024);
  EXPECT_EQ(c.flash.read_latency_ns, 3'500'000u);
  EXPECT_EQ(c.flash.program_latency_ns, 450'000u);
  EXPECT_EQ(c.host.link_bandwidth_bytes_per_s, 1'200'000'000u);
  EXPECT_EQ(c.zns.zone_capacity_bytes, 72'000'000u);
  EXPECT_EQ(c.zns.max_open, 3u);
  EXPECT_EQ(c.store.backing, "memory");
  EXPECT_EQ(c.flash.channels, default_config().flash.channels);  // untouched keys stay
}

TEST(Config, DottedKeysAreTheSameAsTables) {
  Config c = default_config();
  ASSERT_TRUE(apply_toml(c, "zns.max_open = 5\nflash.channels = 2\n", "t").ok());
  EXPECT_EQ(c.zns.max_open, 5u);
  EXPECT_EQ(c.flash.channels, 2u);
}

TEST(Config, UnknownKeysAreRefusedByName) {
  // clang-format off
  const std::pair<const char*, const char*> rows[] = {
      {"colour = \"red\"\n",               "colour"},
      {"[flash]\nchanels = 4\n",           "flash.chanels"},
      {"[zns.reset]\nmodes = \"sync\"\n",  "zns.reset.modes"},
      {"[flash.extra]\nx = 1\n",           "flash.extra.x"},
  };
  // clang-format on
  for (auto [toml, key] : rows) {
    SCOPED_TRACE(toml);
    Config c = default_config();
    Outcome outcome = apply_toml(c, toml, "bad.toml");
    ASSERT_FALSE(outcome.ok());
    EXPECT_TRUE(contains(outcome.error(), key)) << outcome.error();
    EXPECT_TRUE(contains(outcome.error(), "bad.toml")) << outcome.error();
  }
}

TEST(Config, MalformedTomlIsRefusedWithFileAndLine) {
  // clang-format off
  const std::pair<const char*, const char*> rows[] = {
      {"[flash]\nchannels = = 4\n",   "bad.toml:2:"},
      {"seed = 1\n[flash\n",          "bad.toml:2:"},
      {"\n\n\nseed = \"unterminated\n", "bad.toml:4:"},
      {"seed = 1\nseed = 2\n",        "bad.toml:2:"},  // a key given twice
  };
  // clang-format on
  for (auto [toml, where] : rows) {
    SCOPED_TRACE(toml);
    Config c = default_config();
    Outcome outcome = apply_toml(c, toml, "bad.toml");
    ASSERT_FALSE(outcome.ok());
    EXPECT_TRUE(contains(outcome.error(), where)) << outcome.error();
    EXPECT_TRUE(contains(outcome.error(), "malformed TOML")) << outcome.error();
  }
}

TEST(Config, WrongTypesAreRefused) {
  // clang-format off
  const std::pair<const char*, const char*> rows[] = {
      {"[flash]\nchannels = true\n",      "flash.channels"},
      {"[flash]\nchannels = [1, 2]\n",    "flash.channels"},
      {"[flash]\nchannels = -1\n",        "flash.channels"},
      {"[flash]\nchannels = 2.5\n",       "flash.channels"},
      {"[flash]\nread_latency = 3.5\n",   "flash.read_latency"},  // 3.5 ns
      {"interface = 3\n",                 "interface"},
      {"[store]\nbacking = \"disk\"\n",   "store.backing"},
      {"[flash]\npage_size = \"16QB\"\n", "flash.page_size"},
  };
  // clang-format on
  for (auto [toml, key] : rows) {
    SCOPED_TRACE(toml);
    Config c = default_config();
    Outcome outcome = apply_toml(c, toml, "t.toml");
    ASSERT_FALSE(outcome.ok());
    EXPECT_TRUE(contains(outcome.error(), key)) << outcome.error();
  }
}

TEST(Config, AFailedLoadChangesNothing) {
  Config c = default_config();
  std::string before = config_to_json(c);
  Outcome outcome = apply_toml(c, "seed = 99\n[zns]\nmax_open = 3\nbogus = 1\n", "t.toml");
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(config_to_json(c), before);
}

TEST(Config, ValuesOutsideAKeysRangeAreRefusedWithTheRange) {
  // clang-format off
  const std::pair<const char*, const char*> rows[] = {
      {"flash.planes_per_die=17", "flash.planes_per_die"},
      {"host.lba_size=256",       "host.lba_size"},
      {"flash.channels=0",        "flash.channels"},
      {"host.queue_depth=0",      "host.queue_depth"},
      {"flash.erase_latency=11s", "flash.erase_latency"},
  };
  // clang-format on
  for (auto [assignment, key] : rows) {
    SCOPED_TRACE(assignment);
    Config c = default_config();
    Outcome outcome = apply_override(c, assignment);
    ASSERT_FALSE(outcome.ok());
    EXPECT_TRUE(contains(outcome.error(), key)) << outcome.error();
    EXPECT_TRUE(contains(outcome.error(), "out of range")) << outcome.error();
  }
}

// ---------------------------------------------------------------------------
// --set overrides

TEST(Config, OverridesSetOneKey) {
  struct Row {
    const char* assignment;
    std::function<uint64_t(const Config&)> get;
    uint64_t value;
  };
  const Row rows[] = {
      {"zns.max_open=8", [](const Config& c) { return c.zns.max_open; }, 8},
      {"zns.max_open = 9", [](const Config& c) { return c.zns.max_open; }, 9},
      {"flash.page_size=16KiB", [](const Config& c) { return c.flash.page_size_bytes; }, 16384},
      {"flash.read_latency=3.5ms", [](const Config& c) { return c.flash.read_latency_ns; },
       3'500'000},
      {"host.link_bandwidth=1.2GB/s",
       [](const Config& c) { return c.host.link_bandwidth_bytes_per_s; }, 1'200'000'000},
      {"host.link_bandwidth=100MiB/s",
       [](const Config& c) { return c.host.link_bandwidth_bytes_per_s; }, 100 * kMiB},
      {"zns.zone_size=0", [](const Config& c) { return c.zns.zone_size_bytes; }, 0},
      {"zns.zone_capacity=\"72MB\"", [](const Config& c) { return c.zns.zone_capacity_bytes; },
       72'000'000},
      {"seed=42", [](const Config& c) { return c.seed; }, 42},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.assignment);
    Config c = default_config();
    Outcome outcome = apply_override(c, row.assignment);
    ASSERT_TRUE(outcome.ok()) << outcome.error();
    EXPECT_EQ(row.get(c), row.value);
  }
}

TEST(Config, OverridesSetChoices) {
  Config c = default_config();
  ASSERT_TRUE(apply_override(c, "store.backing=memory").ok());
  EXPECT_EQ(c.store.backing, "memory");
  ASSERT_TRUE(apply_override(c, "store.backing=\"none\"").ok());
  EXPECT_EQ(c.store.backing, "none");
  ASSERT_TRUE(apply_override(c, "interface=zns").ok());
}

TEST(Config, BadOverridesAreRefusedWithTheReason) {
  // clang-format off
  const std::pair<const char*, const char*> rows[] = {
      {"zns.max_open",         "KEY=VALUE"},
      {"=8",                   "KEY=VALUE"},
      {"zns.max_opn=8",        "zns.max_opn"},
      {"zns.max_open=",        "zns.max_open"},
      {"zns.max_open=many",    "zns.max_open"},
      {"zns.max_open=1.5",     "zns.max_open"},
      {"store.backing=disk",   "memory"},  // lists the choices
      {"interface=disk",       "interface"},
      {"block.overprovisioning=7.125%", "block.overprovisioning"},
      {"block.overprovisioning=seven",  "block.overprovisioning"},
      {"block.overprovisioning=0%",     "block.overprovisioning"},
      {"block.gc=fifo",        "cost-benefit"},
      {"flash.page_size=16XB", "flash.page_size"},
  };
  // clang-format on
  for (auto [assignment, part] : rows) {
    SCOPED_TRACE(assignment);
    Config c = default_config();
    std::string before = config_to_json(c);
    Outcome outcome = apply_override(c, assignment);
    ASSERT_FALSE(outcome.ok());
    EXPECT_TRUE(contains(outcome.error(), part)) << outcome.error();
    EXPECT_EQ(config_to_json(c), before);
  }
}

TEST(Config, TheSeedTakesAny64BitValue) {
  // The key's declared range is [0, 2^64 - 1].
  Config c = default_config();
  Outcome outcome = apply_override(c, "seed=18446744073709551615");
  ASSERT_TRUE(outcome.ok()) << outcome.error();
  EXPECT_EQ(c.seed, 18446744073709551615ULL);
}

// ---------------------------------------------------------------------------
// Printing

Config tweaked() {
  Config c = preset("zssd-small");
  for (const char* assignment :
       {"seed=123456789", "flash.read_latency=13653ns", "flash.transfer_latency=40960ns",
        "host.link_bandwidth=3940MB/s", "host.command_overhead=1.5us", "host.lba_size=512",
        "zns.zone_count=0", "zns.zasl=480KiB", "store.backing=memory",
        "flash.erase_latency=3.5ms"}) {
    Outcome outcome = apply_override(c, assignment);
    EXPECT_TRUE(outcome.ok()) << outcome.error();
  }
  return c;
}

TEST(Config, ConfigToTomlRoundTripsEveryPresetAndAnUnusualConfig) {
  std::vector<std::pair<std::string, Config>> configs;
  for (const std::string& name : preset_names()) configs.push_back({name, preset(name)});
  configs.push_back({"tweaked", tweaked()});
  for (const auto& [name, original] : configs) {
    SCOPED_TRACE(name);
    std::string toml = config_to_toml(original);
    Config reloaded;  // all zero: every value must come from the text
    Outcome outcome = apply_toml(reloaded, toml, "printed");
    ASSERT_TRUE(outcome.ok()) << outcome.error() << "\n" << toml;
    EXPECT_EQ(config_to_json(reloaded), config_to_json(original));
    EXPECT_EQ(config_to_toml(reloaded), toml);
  }
}

TEST(Config, ConfigToJsonHasEveryKeyWithCountsAsNumbers) {
  auto json = nlohmann::json::parse(config_to_json(tweaked()));
  for (const ConfigKeyInfo& key : config_keys()) {
    SCOPED_TRACE(key.name);
    auto pointer = "/" + key.name;
    for (char& ch : pointer) {
      if (ch == '.') ch = '/';
    }
    ASSERT_TRUE(json.contains(nlohmann::json::json_pointer(pointer)));
    const auto& value = json.at(nlohmann::json::json_pointer(pointer));
    if (key.kind == "count") {
      EXPECT_TRUE(value.is_number_unsigned()) << value.dump();
    } else if (key.kind == "bool") {
      EXPECT_TRUE(value.is_boolean()) << value.dump();
    } else {
      EXPECT_TRUE(value.is_string()) << value.dump();
    }
  }
  EXPECT_EQ(json["seed"], 123456789u);
  EXPECT_EQ(json["flash"]["read_latency"], "13653ns");
  EXPECT_EQ(json["store"]["backing"], "memory");
}

// ---------------------------------------------------------------------------
// Files

std::string temp_path(const char* name) { return testing::TempDir() + "zonelab_config_" + name; }

TEST(Config, ATomlFileIsAppliedAndNamedInErrors) {
  std::string good = temp_path("good.toml");
  {
    std::ofstream out(good);
    out << "[zns]\nmax_open = 4\n";
  }
  Config c = default_config();
  Outcome outcome = apply_toml_file(c, good);
  ASSERT_TRUE(outcome.ok()) << outcome.error();
  EXPECT_EQ(c.zns.max_open, 4u);

  std::string bad = temp_path("bad.toml");
  {
    std::ofstream out(bad);
    out << "[zns]\nmax_open = 4\nmax_open_zones = 4\n";
  }
  outcome = apply_toml_file(c, bad);
  ASSERT_FALSE(outcome.ok());
  EXPECT_TRUE(contains(outcome.error(), bad)) << outcome.error();
  EXPECT_TRUE(contains(outcome.error(), "zns.max_open_zones")) << outcome.error();
  std::remove(good.c_str());
  std::remove(bad.c_str());
}

TEST(Config, AMissingFileIsAnErrorNamingIt) {
  Config c = default_config();
  std::string path = temp_path("does_not_exist.toml");
  Outcome outcome = apply_toml_file(c, path);
  ASSERT_FALSE(outcome.ok());
  EXPECT_TRUE(contains(outcome.error(), path)) << outcome.error();
}

TEST(Config, AnOversizedFileIsRefused) {
  std::string path = temp_path("huge.toml");
  {
    std::ofstream out(path);
    std::string comment(1000, 'x');
    for (int i = 0; i < 1100; ++i) out << "# " << comment << "\n";
  }
  Config c = default_config();
  Outcome outcome = apply_toml_file(c, path);
  EXPECT_FALSE(outcome.ok());
  std::remove(path.c_str());
}

TEST(Config, DeeplyNestedTomlIsRefusedWithTheLimitNotACrash) {
  std::string dotted = "zns";
  for (int i = 0; i < 100'000; ++i) dotted += ".x";
  for (const std::string& text :
       {dotted + " = 1\n", "[" + dotted + "]\n", "x = " + std::string(100'000, '[')}) {
    Config c = default_config();
    Outcome outcome = apply_toml(c, text, "stored configuration");
    ASSERT_FALSE(outcome.ok());
    EXPECT_TRUE(contains(outcome.error(), "limit of 32 levels")) << outcome.error();
    EXPECT_EQ(config_to_toml(c), config_to_toml(default_config()));
  }
  std::string path = temp_path("deep.toml");
  {
    std::ofstream out(path);
    out << dotted << " = 1\n";
  }
  Config c = default_config();
  Outcome outcome = apply_toml_file(c, path);
  ASSERT_FALSE(outcome.ok());
  EXPECT_TRUE(contains(outcome.error(), path + ":1:")) << outcome.error();
  std::remove(path.c_str());
}

TEST(Config, ADirectoryIsNotAConfigurationFile) {
  Config c = default_config();
  Outcome outcome = apply_toml_file(c, testing::TempDir());
  ASSERT_FALSE(outcome.ok());
  EXPECT_TRUE(contains(outcome.error(), "is a directory")) << outcome.error();
}

}  // namespace
}  // namespace zonelab
