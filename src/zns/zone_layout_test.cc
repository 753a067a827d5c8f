// The namespace layout and the zone -> parallel-unit mapping (seed 002's SU,
// MU and FU zones), and the checks that turn a bad configuration into an
// error that names the key to fix.
#include "zns/zone_layout.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <set>
#include <string>
#include <string_view>
#include <tuple>

#include "flash/flash.h"
#include "zonelab/config.h"

namespace zonelab {
namespace {

// The default device ("small"): 4 channels x 2 dies x 2 planes, 64 blocks of
// 192 x 16 KiB pages, 4 KiB LBAs, zones of 48 MiB capacity.
Config config_with(std::initializer_list<std::string_view> overrides) {
  Config config = default_config();
  for (std::string_view assignment : overrides) {
    Outcome outcome = apply_override(config, assignment);
    EXPECT_TRUE(outcome.ok()) << outcome.error();
  }
  return config;
}

ZoneLayout layout_of(const Config& config) {
  auto layout = ZoneLayout::make(config);
  if (!layout.ok()) {
    ADD_FAILURE() << layout.error();
    return ZoneLayout::make(default_config()).value();
  }
  return layout.value();
}

struct UnitRow {
  uint32_t zone;
  uint32_t unit;
  uint32_t channel;
  uint32_t die;
  uint32_t plane;
};

void expect_units(const Config& config, std::initializer_list<UnitRow> rows) {
  ZoneLayout layout = layout_of(config);
  Flash flash(config.flash);
  for (const UnitRow& row : rows) {
    SCOPED_TRACE(testing::Message() << "zone " << row.zone << " unit " << row.unit);
    EXPECT_EQ(layout.unit_plane(row.zone, row.unit),
              flash.plane_index(row.channel, row.die, row.plane));
  }
}

// ---------------------------------------------------------------------------
// LBA layout

TEST(ZoneLayout, DefaultZoneSizeIsTheNextPowerOfTwoAboveCapacity) {
  ZoneLayout l = layout_of(default_config());
  EXPECT_EQ(l.lba_size_bytes(), 4096u);
  EXPECT_EQ(l.zone_capacity_lbas(), 48u * 1024 * 1024 / 4096);
  EXPECT_EQ(l.zone_size_lbas(), 64u * 1024 * 1024 / 4096);
}

TEST(ZoneLayout, AnExplicitZoneSizeIsKept) {
  ZoneLayout equal = layout_of(config_with({"zns.zone_size=48MiB"}));
  EXPECT_EQ(equal.zone_size_lbas(), equal.zone_capacity_lbas());
  ZoneLayout large = layout_of(config_with({"zns.zone_size=128MiB"}));
  EXPECT_EQ(large.zone_size_lbas(), 128u * 256);
}

TEST(ZoneLayout, ZonesTileTheNamespaceBySize) {
  ZoneLayout l = layout_of(default_config());
  uint64_t size = l.zone_size_lbas();
  EXPECT_EQ(l.capacity_lbas(), size * l.zone_count());
  EXPECT_EQ(l.zone_start_lba(0), 0u);
  EXPECT_EQ(l.zone_start_lba(3), 3 * size);
  EXPECT_EQ(l.zone_of_lba(0), 0u);
  EXPECT_EQ(l.zone_of_lba(size - 1), 0u);
  EXPECT_EQ(l.zone_of_lba(size), 1u);
  EXPECT_EQ(l.zone_of_lba(3 * size + l.zone_capacity_lbas()), 3u);  // the gap is zone 3's
}

TEST(ZoneLayout, ZoneCountDefaultsToWhatTheFlashHolds) {
  ZoneLayout l = layout_of(default_config());
  // FU zones: one group; 48 MiB = 192 pages on each of 16 planes = 1 block.
  EXPECT_EQ(l.groups(), 1u);
  EXPECT_EQ(l.blocks_per_zone_unit(), 1u);
  EXPECT_EQ(l.max_zones(), 64u);
  EXPECT_EQ(l.zone_count(), 64u);
  EXPECT_EQ(layout_of(config_with({"zns.zone_count=20"})).zone_count(), 20u);
}

TEST(ZoneLayout, PagesAndZaslInLbas) {
  ZoneLayout l = layout_of(default_config());
  EXPECT_EQ(l.page_size_bytes(), 16384u);
  EXPECT_EQ(l.lbas_per_page(), 4u);
  EXPECT_EQ(l.zasl_lbas(), 512u / 4);
  EXPECT_EQ(l.units_per_zone(), 16u);
  EXPECT_EQ(l.stripe_bytes(), 16u * 16384);
  EXPECT_EQ(l.pages_per_zone_unit(), 192u);
  EXPECT_EQ(l.pages_per_zone(), 16u * 192);
}

// ---------------------------------------------------------------------------
// Zone -> unit mapping

TEST(ZoneLayout, SingleUnitZonesTakeOneDieEachChannelsFirst) {
  // SU: a zone is one die's planes; 8 groups (4 channels x 2 dies).
  // clang-format off
  expect_units(config_with({"zns.channels_per_zone=1", "zns.dies_per_zone=1"}), {
      // zone unit channel die plane
      {0, 0, 0, 0, 0},
      {0, 1, 0, 0, 1},
      {1, 0, 1, 0, 0},
      {3, 1, 3, 0, 1},
      {4, 0, 0, 1, 0},
      {7, 1, 3, 1, 1},
      {8, 0, 0, 0, 0},  // the second round over the groups
      {9, 1, 1, 0, 1},
  });
  // clang-format on
}

TEST(ZoneLayout, MultiUnitZonesSpanTheirChannelsFirst) {
  // MU: 2 channels x 1 die x 2 planes = 4 units; 4 groups.
  // clang-format off
  expect_units(config_with({"zns.channels_per_zone=2", "zns.dies_per_zone=1"}), {
      {0, 0, 0, 0, 0},
      {0, 1, 1, 0, 0},
      {0, 2, 0, 0, 1},
      {0, 3, 1, 0, 1},
      {1, 0, 2, 0, 0},
      {1, 1, 3, 0, 0},
      {2, 0, 0, 1, 0},
      {3, 3, 3, 1, 1},
      {4, 0, 0, 0, 0},
  });
  // clang-format on
}

TEST(ZoneLayout, DieSpanningZonesStripeDiesBeforePlanes) {
  // 1 channel x 2 dies x 2 planes = 4 units; 4 groups, one per channel.
  // clang-format off
  expect_units(config_with({"zns.channels_per_zone=1", "zns.dies_per_zone=2"}), {
      {0, 0, 0, 0, 0},
      {0, 1, 0, 1, 0},
      {0, 2, 0, 0, 1},
      {0, 3, 0, 1, 1},
      {2, 1, 2, 1, 0},
  });
  // clang-format on
}

TEST(ZoneLayout, FullUnitZonesStripeChannelsThenDiesThenPlanes) {
  // clang-format off
  expect_units(default_config(), {
      {0,  0, 0, 0, 0},
      {0,  1, 1, 0, 0},
      {0,  3, 3, 0, 0},
      {0,  4, 0, 1, 0},
      {0,  7, 3, 1, 0},
      {0,  8, 0, 0, 1},
      {0, 15, 3, 1, 1},
      {5,  9, 1, 0, 1},  // every zone spans every unit
  });
  // clang-format on
}

TEST(ZoneLayout, ConsecutiveZonesGoToDifferentGroups) {
  for (auto [channels, dies] : {std::pair{1, 1}, std::pair{2, 1}, std::pair{1, 2}}) {
    Config config = config_with({});
    config.zns.channels_per_zone = static_cast<uint64_t>(channels);
    config.zns.dies_per_zone = static_cast<uint64_t>(dies);
    ZoneLayout l = layout_of(config);
    SCOPED_TRACE(testing::Message() << l.groups() << " groups");
    ASSERT_GT(l.groups(), 1u);
    for (uint32_t z = 0; z + 1 < l.groups(); ++z) {
      std::set<uint32_t> a;
      std::set<uint32_t> b;
      for (uint32_t u = 0; u < l.units_per_zone(); ++u) {
        a.insert(l.unit_plane(z, u));
        b.insert(l.unit_plane(z + 1, u));
      }
      for (uint32_t plane : b) EXPECT_EQ(a.count(plane), 0u) << "zones " << z << ", " << z + 1;
    }
    // After a full round the groups repeat, on the next blocks.
    EXPECT_EQ(l.unit_plane(l.groups(), 0), l.unit_plane(0, 0));
    EXPECT_EQ(l.first_block(l.groups()), l.first_block(0) + l.blocks_per_zone_unit());
  }
}

TEST(ZoneLayout, SequentialPagesFanOutOverEveryChannelBeforeReusingOne) {
  Config config = default_config();
  ZoneLayout l = layout_of(config);
  Flash flash(config.flash);
  for (uint32_t page = 0; page < 4; ++page) {
    EXPECT_EQ(flash.channel_of_plane(l.locate(0, page).plane), page);
    EXPECT_EQ(l.locate(0, page).page, 0u);
  }
  EXPECT_EQ(flash.channel_of_plane(l.locate(0, 4).plane), 0u);
  EXPECT_NE(l.locate(0, 4).plane, l.locate(0, 0).plane);   // the other die
  EXPECT_EQ(l.locate(0, 16).plane, l.locate(0, 0).plane);  // a full stripe later
  EXPECT_EQ(l.locate(0, 16).page, 1u);
}

// A small MU device: 4 groups, 2 blocks of 4 pages per zone unit.
Config small_mu() {
  return config_with({"flash.blocks_per_plane=8", "flash.pages_per_block=4",
                      "zns.channels_per_zone=2", "zns.dies_per_zone=1", "zns.zone_capacity=512KiB",
                      "zns.zone_size=0", "zns.zone_count=0", "zns.max_open=0", "zns.max_active=0"});
}

TEST(ZoneLayout, LocateFindsBlockAndPageWithinTheUnit) {
  Config config = small_mu();
  ZoneLayout l = layout_of(config);
  Flash flash(config.flash);
  ASSERT_EQ(l.units_per_zone(), 4u);
  ASSERT_EQ(l.blocks_per_zone_unit(), 2u);
  EXPECT_EQ(l.first_block(5), 2u);  // zone 5: group 1, second round
  struct Row {
    uint32_t page;
    uint32_t channel;
    uint32_t plane;
    uint32_t block;
    uint32_t block_page;
  };
  // clang-format off
  const Row rows[] = {
      {0,  2, 0, 2, 0},
      {1,  3, 0, 2, 0},
      {2,  2, 1, 2, 0},
      {9,  3, 0, 2, 2},
      {13, 3, 0, 2, 3},
      {17, 3, 0, 3, 0},  // unit page 4: the unit's second block
      {31, 3, 1, 3, 3},  // the last page of the zone
  };
  // clang-format on
  for (const Row& row : rows) {
    SCOPED_TRACE(testing::Message() << "page " << row.page);
    FlashPage p = l.locate(5, row.page);
    EXPECT_EQ(p.plane, flash.plane_index(row.channel, 0, row.plane));
    EXPECT_EQ(p.block, row.block);
    EXPECT_EQ(p.page, row.block_page);
  }
}

TEST(ZoneLayout, EveryZonePageHasItsOwnFlashPageAndZonesTileTheFlash) {
  Config config = small_mu();
  ZoneLayout l = layout_of(config);
  std::set<std::tuple<uint32_t, uint32_t, uint32_t>> seen;
  for (uint32_t z = 0; z < l.zone_count(); ++z) {
    for (uint32_t page = 0; page < l.pages_per_zone(); ++page) {
      FlashPage p = l.locate(z, page);
      EXPECT_TRUE(seen.insert({p.plane, p.block, p.page}).second)
          << "zone " << z << " page " << page << " reuses a flash page";
    }
  }
  const FlashConfig& f = config.flash;
  EXPECT_EQ(seen.size(), f.channels * f.dies_per_channel * f.planes_per_die * f.blocks_per_plane *
                             f.pages_per_block);
}

TEST(ZoneLayout, UnitPagesSplitAPrefixOfTheZoneRoundRobin) {
  ZoneLayout l = layout_of(small_mu());
  const uint32_t expected[][4] = {
      {0, 0, 0, 0}, {1, 0, 0, 0}, {1, 1, 1, 1}, {3, 2, 2, 2}, {8, 8, 8, 8}};
  const uint32_t pages[] = {0, 1, 4, 9, 32};
  for (size_t i = 0; i < std::size(pages); ++i) {
    for (uint32_t unit = 0; unit < 4; ++unit) {
      EXPECT_EQ(l.unit_pages(0, unit, pages[i]), expected[i][unit])
          << pages[i] << " pages, unit " << unit;
    }
  }
}

// ---------------------------------------------------------------------------
// Validation: each bad configuration is refused with the key to fix

struct InvalidRow {
  std::initializer_list<std::string_view> overrides;
  const char* key;  // the error must name it
};

TEST(ZoneLayout, InvalidConfigurationsNameTheKey) {
  // clang-format off
  const InvalidRow rows[] = {
      {{"zns.zone_capacity=40KiB"},                     "zns.zone_capacity"},  // not a stripe multiple
      {{"zns.zone_capacity=13GiB"},                     "zns.zone_capacity"},  // more blocks than a plane
      {{"zns.max_open=8", "zns.max_active=4"},          "zns.max_open"},
      {{"zns.max_open=8", "zns.max_active=4"},          "zns.max_active"},
      {{"zns.max_open=65", "zns.max_active=65"},        "zns.max_open"},       // more than the zones
      {{"zns.zone_count=65"},                           "zns.zone_count"},     // flash holds 64
      {{"zns.channels_per_zone=3"},                     "zns.channels_per_zone"},
      {{"zns.channels_per_zone=8"},                     "zns.channels_per_zone"},
      {{"zns.dies_per_zone=3"},                         "zns.dies_per_zone"},
      {{"zns.zone_size=32MiB"},                         "zns.zone_size"},      // below capacity
      {{"zns.zasl=6KiB"},                               "zns.zasl"},
      {{"host.lba_size=3072"},                          "host.lba_size"},      // not a power of two
      {{"flash.page_size=6KiB"},                        "flash.page_size"},    // not LBA-aligned
  };
  // clang-format on
  for (const InvalidRow& row : rows) {
    Config config = config_with(row.overrides);
    std::string what;
    for (std::string_view o : row.overrides) what += std::string(o) + " ";
    SCOPED_TRACE(what);
    auto layout = ZoneLayout::make(config);
    ASSERT_FALSE(layout.ok());
    EXPECT_NE(layout.error().find(row.key), std::string::npos) << layout.error();
  }
}

TEST(ZoneLayout, ZeroGeometryIsRefusedByTheKeyLimitsAndByTheLayout) {
  for (std::string_view key :
       {"flash.channels", "flash.dies_per_channel", "flash.planes_per_die",
        "flash.blocks_per_plane", "flash.pages_per_block", "zns.channels_per_zone",
        "zns.dies_per_zone", "zns.zone_capacity", "host.queue_depth", "host.link_bandwidth"}) {
    SCOPED_TRACE(key);
    Config config = default_config();
    Outcome outcome = apply_override(config, std::string(key) + "=0");
    ASSERT_FALSE(outcome.ok());
    EXPECT_NE(outcome.error().find(key), std::string::npos) << outcome.error();
  }
  // A Config built in code bypasses the key limits; the layout still refuses.
  Config config = default_config();
  config.flash.channels = 0;
  auto layout = ZoneLayout::make(config);
  ASSERT_FALSE(layout.ok());
  EXPECT_NE(layout.error().find("channels"), std::string::npos) << layout.error();
}

TEST(ZoneLayout, HostLimitsBuiltInCodeAreRefused) {
  struct Row {
    void (*mutate)(Config&);
    const char* key;
  };
  const Row rows[] = {
      {[](Config& c) { c.host.queue_depth = 0; }, "host.queue_depth"},
      {[](Config& c) { c.host.link_bandwidth_bytes_per_s = 0; }, "host.link_bandwidth"},
      {[](Config& c) { c.zns.channels_per_zone = 0; }, "zns.channels_per_zone"},
      {[](Config& c) { c.zns.dies_per_zone = 0; }, "zns.dies_per_zone"},
      {[](Config& c) { c.zns.zone_capacity_bytes = 0; }, "zns.zone_capacity"},
      {[](Config& c) { c.zns.zasl_bytes = 0; }, "zns.zasl"},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.key);
    Config config = default_config();
    row.mutate(config);
    auto layout = ZoneLayout::make(config);
    ASSERT_FALSE(layout.ok());
    EXPECT_NE(layout.error().find(row.key), std::string::npos) << layout.error();
  }
}

TEST(ZoneLayout, OnlyTheZnsInterfaceIsAvailable) {
  Config config = default_config();
  config.interface = "block";
  auto layout = ZoneLayout::make(config);
  ASSERT_FALSE(layout.ok());
  EXPECT_NE(layout.error().find("interface"), std::string::npos) << layout.error();
}

TEST(ZoneLayout, LimitsEqualToEachOtherOrZeroAreAccepted) {
  EXPECT_TRUE(ZoneLayout::make(config_with({"zns.max_open=14", "zns.max_active=14"})).ok());
  EXPECT_TRUE(ZoneLayout::make(config_with({"zns.max_open=0", "zns.max_active=0"})).ok());
  EXPECT_TRUE(ZoneLayout::make(config_with({"zns.max_open=5", "zns.max_active=0"})).ok());
  EXPECT_TRUE(ZoneLayout::make(config_with({"zns.max_open=0", "zns.max_active=5"})).ok());
}

TEST(ZoneLayout, TheOpenBlockBudgetBoundsActiveAndOpenZones) {
  // small: a zone spans 4 channels x 2 dies x 2 planes, 16 open blocks.
  Config c = default_config();
  const ZoneLayout plain = layout_of(c);
  EXPECT_EQ(plain.open_blocks_per_zone(), 16U);
  EXPECT_EQ(plain.max_active(), static_cast<uint32_t>(c.zns.max_active));
  EXPECT_EQ(plain.max_open(), static_cast<uint32_t>(c.zns.max_open));
  for (uint64_t budget : {16, 17, 47, 48, 160}) {
    Config b = config_with({"zns.max_active=0", "zns.max_open=0"});
    b.zns.max_open_blocks = budget;
    const ZoneLayout l = layout_of(b);
    const uint32_t zones = static_cast<uint32_t>(
        std::min<uint64_t>(budget / l.open_blocks_per_zone(), l.zone_count()));
    EXPECT_EQ(l.max_active(), zones) << budget;
    EXPECT_EQ(l.max_open(), zones) << budget;
  }
  // The configuration's own limits stand where they are lower.
  Config lower = config_with({"zns.max_active=3", "zns.max_open=2", "zns.max_open_blocks=160"});
  EXPECT_EQ(layout_of(lower).max_active(), 3U);
  EXPECT_EQ(layout_of(lower).max_open(), 2U);
  Config higher = config_with({"zns.max_active=8", "zns.max_open=8", "zns.max_open_blocks=48"});
  EXPECT_EQ(layout_of(higher).max_active(), 3U);
  EXPECT_EQ(layout_of(higher).max_open(), 3U);
  // Narrower zones hold fewer blocks: more of them open on one budget.
  Config narrow =
      config_with({"zns.channels_per_zone=1", "zns.dies_per_zone=1", "zns.zone_capacity=12MiB",
                   "zns.max_active=0", "zns.max_open=0", "zns.max_open_blocks=48"});
  EXPECT_EQ(layout_of(narrow).open_blocks_per_zone(), 2U);
  EXPECT_EQ(layout_of(narrow).max_active(), 24U);
  // A budget below one zone's blocks is refused, naming the key.
  Config tiny = config_with({"zns.max_open_blocks=15"});
  auto refused = ZoneLayout::make(tiny);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().find("zns.max_open_blocks (15) cannot keep one zone open"),
            std::string::npos)
      << refused.error();
}

}  // namespace
}  // namespace zonelab
