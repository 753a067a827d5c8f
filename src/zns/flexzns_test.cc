// FlexZNS on the ZNS device (seed 001 §III; zone_layout.h, parity.cc): zone
// sets of several sizes under the NVMe zone rules, in-zone parity capacity,
// the least-loaded FBG choice at a zone's first write, die-level XOR parity
// (in-zone, or in the parity area with two copies for a superblock-wide
// zone), rebuilds after die failures, the parity buffer recomputed after a
// crash, and failed dies in the device state.
//
// The flash is small: 4 channels x 2 dies x 2 planes, 16 blocks of 64 4 KiB
// pages a plane. Zone sizes are given in chunks (a block of every plane of
// one die) and superblocks (a chunk of every die), and every expectation is
// derived from the geometry.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "store/image.h"
#include "zns/zns_device.h"

namespace zonelab {
namespace {

class Sink final : public CompletionSink {
 public:
  void on_complete(Command&) override {}
};

Config small_flex_flash(const std::vector<std::string>& extra = {}) {
  Config c = *preset_config("small");
  for (const char* kv :
       {"flash.channels=4", "flash.dies_per_channel=2", "flash.planes_per_die=2",
        "flash.blocks_per_plane=16", "flash.pages_per_block=64", "flash.page_size=4KiB",
        "host.lba_size=4KiB", "store.backing=memory", "zns.max_open=0", "zns.max_active=0",
        "zns.finish.granularity=0"}) {
    EXPECT_TRUE(apply_override(c, kv).ok()) << kv;
  }
  for (const std::string& kv : extra) EXPECT_TRUE(apply_override(c, kv).ok()) << kv;
  return c;
}

// The flash as FlexZNS sees it, from the configuration alone.
uint32_t flash_dies(const Config& c) {
  return static_cast<uint32_t>(c.flash.channels * c.flash.dies_per_channel);
}
uint64_t chunk_bytes(const Config& c) {
  return c.flash.planes_per_die * c.flash.pages_per_block * c.flash.page_size_bytes;
}
uint64_t superblock_bytes(const Config& c) { return chunk_bytes(c) * flash_dies(c); }

struct SetSpec {
  uint64_t zone_bytes = 0;
  uint32_t count = 0;
};

// `base` formatted as `sets` ("SIZE:COUNT,...") with `parity` placement.
Config formatted(Config c, const std::vector<SetSpec>& sets, const std::string& parity) {
  std::string text;
  for (const SetSpec& s : sets) {
    if (!text.empty()) text += ",";
    text += std::to_string(s.zone_bytes >> 10) + "KiB:" + std::to_string(s.count);
  }
  EXPECT_TRUE(apply_override(c, "zns.format=" + text).ok()) << text;
  EXPECT_TRUE(apply_override(c, "zns.parity.placement=" + parity).ok()) << parity;
  return c;
}

// The two-set format of most tests: zones of two chunks (two dies) and of a
// superblock (every die).
std::vector<SetSpec> two_sets(const Config& c) {
  return {{2 * chunk_bytes(c), 8}, {superblock_bytes(c), 6}};
}

// A device, the data written to each zone (from the zone's start), and
// helpers to look at where pages and parity live.
struct Dev {
  explicit Dev(const Config& c, uint64_t seed = 1) : config(c), rng(seed) {
    auto made = make_zns_device(config, sim);
    EXPECT_TRUE(made.ok()) << made.error();
    if (!made.ok()) return;
    device = std::move(made).value();
    shadow.resize(device->info().zone_count);
  }
  bool ok() const { return device != nullptr; }

  const ZoneLayout& layout() const { return device->layout(); }
  uint64_t lba_bytes() const { return layout().lba_size_bytes(); }
  uint64_t lpp() const { return layout().lbas_per_page(); }
  uint64_t page_bytes() const { return lpp() * lba_bytes(); }
  uint64_t start(uint32_t zone) const { return layout().zone_start_lba(zone); }
  uint32_t slot(uint32_t zone) const { return device->block_map().slot_of(zone); }
  const FlexSlot& fbg(uint32_t zone) const { return layout().flex_slot(slot(zone)); }
  uint32_t ppd() const { return static_cast<uint32_t>(config.flash.planes_per_die); }

  Command run(Opcode op, uint64_t slba, uint64_t nlb, uint8_t* data,
              ZoneAction action = ZoneAction::kNone) {
    Command c;
    c.opcode = op;
    c.slba = slba;
    c.nlb = static_cast<uint32_t>(nlb);
    c.data = data;
    c.action = action;
    c.sink = &sink;
    device->submit(c);
    sim.run();
    return c;
  }
  Status send(uint32_t zone, ZoneAction action) {
    return run(Opcode::kZoneManagementSend, start(zone), 0, nullptr, action).status;
  }

  std::vector<uint8_t> random_bytes(uint64_t bytes) {
    std::vector<uint8_t> out(bytes);
    for (uint64_t i = 0; i < bytes; i += 8) {
      uint64_t word = rng();
      std::memcpy(out.data() + i, &word, std::min<uint64_t>(8, bytes - i));
    }
    return out;
  }
  // Writes `nlb` random LBAs at the zone's write pointer.
  Status write_random(uint32_t zone, uint64_t nlb) {
    std::vector<uint8_t> data = random_bytes(nlb * lba_bytes());
    Command c = run(Opcode::kWrite, start(zone) + written_lbas(zone), nlb, data.data());
    if (c.status == Status::kSuccess) {
      shadow[zone].insert(shadow[zone].end(), data.begin(), data.end());
    }
    return c.status;
  }
  uint64_t written_lbas(uint32_t zone) const { return shadow[zone].size() / lba_bytes(); }
  uint32_t written_pages(uint32_t zone) const {
    return static_cast<uint32_t>((written_lbas(zone) + lpp() - 1) / lpp());
  }
  // Pages the flash holds (the last, partly filled one is in the page buffer).
  uint32_t full_pages(uint32_t zone) const {
    return static_cast<uint32_t>(written_lbas(zone) / lpp());
  }

  Command read(uint64_t slba, uint64_t nlb, std::vector<uint8_t>& out) {
    out.assign(nlb * lba_bytes(), 0xEE);
    return run(Opcode::kRead, slba, nlb, out.data());
  }
  // What zone LBAs [offset, offset + nlb) must read back as.
  std::vector<uint8_t> expected(uint32_t zone, uint64_t offset, uint64_t nlb) const {
    std::vector<uint8_t> out(nlb * lba_bytes(), 0);
    const std::vector<uint8_t>& s = shadow[zone];
    uint64_t from = offset * lba_bytes();
    if (from < s.size()) {
      uint64_t to = std::min<uint64_t>(s.size(), from + out.size());
      std::copy(s.begin() + static_cast<std::ptrdiff_t>(from),
                s.begin() + static_cast<std::ptrdiff_t>(to), out.begin());
    }
    return out;
  }
  // Reads the zone page by page; true when every page reads back as written.
  bool reads_back(uint32_t zone) {
    std::vector<uint8_t> got;
    Command c = read(start(zone), written_lbas(zone), got);
    EXPECT_EQ(c.status, Status::kSuccess) << "zone " << zone;
    return c.status == Status::kSuccess && got == expected(zone, 0, written_lbas(zone));
  }

  // The flat die of zone page `page` (through the page's flash address).
  uint32_t flat_die(uint32_t zone, uint32_t page) const {
    return layout().locate(slot(zone), page).plane / ppd();
  }
  Outcome fail(uint32_t flat) {
    auto dpc = static_cast<uint32_t>(config.flash.dies_per_channel);
    return device->inject_die(flat / dpc, flat % dpc);
  }
  bool failed(uint32_t flat) const { return device->die_failed(flat); }
  // Overwrites, in the backing, the LBAs of the zone's pages the flash holds
  // on failed dies (the device must not read them); returns the pages.
  uint64_t clobber_lost(uint32_t zone) {
    uint64_t lost = 0;
    for (uint32_t page = 0; page < full_pages(zone); ++page) {
      if (!failed(flat_die(zone, page))) continue;
      std::vector<uint8_t> junk(page_bytes(), 0xA5);
      EXPECT_TRUE(device->backing().write(start(zone) + page * lpp(),
                                          static_cast<uint32_t>(lpp()), junk.data()));
      ++lost;
    }
    return lost;
  }

  // Where the device keeps the parity of a stripe (parity.cc).
  uint64_t parity_lba(uint32_t s, uint32_t stripe) const {
    return layout().capacity_lbas() +
           (uint64_t{s} * layout().stripes_of_slot(s) + stripe) * layout().lbas_per_page();
  }
  std::vector<uint8_t> stored_parity(uint32_t zone, uint32_t stripe) {
    std::vector<uint8_t> out(page_bytes());
    EXPECT_TRUE(device->backing().read(parity_lba(slot(zone), stripe),
                                       static_cast<uint32_t>(lpp()), out.data()));
    return out;
  }
  // The XOR of the data pages of a stripe (zeros past the data).
  std::vector<uint8_t> xor_of_stripe(uint32_t zone, uint32_t stripe) const {
    const uint32_t dd = fbg(zone).data_dies;
    std::vector<uint8_t> out(page_bytes(), 0);
    for (uint32_t page = stripe * dd; page < (stripe + 1) * dd; ++page) {
      std::vector<uint8_t> data = expected(zone, page * lpp(), lpp());
      for (size_t i = 0; i < out.size(); ++i) out[i] ^= data[i];
    }
    return out;
  }
  uint32_t stripes_with_data(uint32_t zone) const {
    const uint32_t dd = fbg(zone).data_dies;
    return (written_pages(zone) + dd - 1) / dd;
  }

  // Whether zone page `page` can be read after the failures: the page
  // buffer holds it, its die is alive, or it is the only page with data of
  // its stripe on a failed die and a copy of the stripe's parity is alive.
  bool readable(uint32_t zone, uint32_t page) const {
    if (page >= full_pages(zone) || !failed(flat_die(zone, page))) return true;
    if (layout().parity() == ParityPlacement::kNone) return false;
    const FlexSlot& s = fbg(zone);
    const uint32_t stripe = page / s.data_dies;
    bool parity_alive = false;
    for (uint32_t copy = 0; copy < s.parity.size(); ++copy) {
      if (!failed(layout().parity_page(slot(zone), copy, stripe).plane / ppd())) {
        parity_alive = true;
      }
    }
    if (!parity_alive) return false;
    for (uint32_t q = stripe * s.data_dies; q < (stripe + 1) * s.data_dies; ++q) {
      if (q != page && q < written_pages(zone) && failed(flat_die(zone, q))) return false;
    }
    return true;
  }

  // A read of the same LBAs on an idle device (every flash operation done).
  uint64_t idle_read_latency(uint64_t slba, uint64_t nlb) {
    sim.advance_to(std::max(sim.now_ns(), device->flash().drained_at_ns()));
    std::vector<uint8_t> got;
    Command c = read(slba, nlb, got);
    EXPECT_EQ(c.status, Status::kSuccess);
    return c.latency_ns();
  }

  uint64_t parity_programs() const {
    return device->flash().counters().program_pages[static_cast<size_t>(FlashCause::kParity)];
  }

  Config config;
  Simulator sim;
  Sink sink;
  std::mt19937_64 rng;
  std::unique_ptr<ZnsDevice> device;
  std::vector<std::vector<uint8_t>> shadow;
};

// Copies of a stripe's parity: two for an FBG of every die, one otherwise.
uint32_t parity_copies(const Config& c, const FlexSlot& s) {
  return s.dies == flash_dies(c) ? 2u : 1u;
}

TEST(FlexZns, ZoneSetsLieOneAfterAnotherAndKeepTheNvmeZoneRules) {
  Config c = formatted(small_flex_flash(), two_sets(small_flex_flash()), "separate");
  Dev d(c);
  ASSERT_TRUE(d.ok());
  const DeviceInfo& info = d.device->info();
  const uint64_t lba = c.host.lba_size_bytes;
  const std::vector<SetSpec> sets = two_sets(c);
  ASSERT_EQ(info.zone_sets.size(), sets.size());
  EXPECT_FALSE(info.uniform_zones());

  // Descriptors: sets in order, each zone's capacity its size (separate
  // parity takes no room in a zone).
  uint32_t zone = 0;
  uint64_t next_lba = 0;
  std::vector<uint32_t> first_zone_of_set;
  for (uint32_t set = 0; set < sets.size(); ++set) {
    const uint64_t size = sets[set].zone_bytes / lba;
    first_zone_of_set.push_back(zone);
    EXPECT_EQ(info.zone_sets[set].first_zone, zone);
    EXPECT_EQ(info.zone_sets[set].first_lba, next_lba);
    EXPECT_EQ(info.zone_sets[set].zone_size_lbas, size);
    EXPECT_EQ(info.zone_sets[set].zone_capacity_lbas, size);
    EXPECT_EQ(info.zone_sets[set].zone_count, sets[set].count);
    for (uint32_t i = 0; i < sets[set].count; ++i, ++zone, next_lba += size) {
      ZoneDescriptor z = d.device->zone(zone);
      EXPECT_EQ(z.start_lba, next_lba) << zone;
      EXPECT_EQ(z.capacity_lbas, size) << zone;
      EXPECT_EQ(z.wp_lba, next_lba) << zone;
      EXPECT_EQ(z.state, ZoneState::kEmpty) << zone;
      EXPECT_EQ(info.zone_start_lba(zone), next_lba) << zone;
      EXPECT_EQ(info.zone_size_of(zone), size) << zone;
      EXPECT_EQ(info.zone_capacity_of(zone), size) << zone;
      EXPECT_EQ(info.zone_of_lba(next_lba), zone) << zone;
      EXPECT_EQ(info.zone_of_lba(next_lba + size - 1), zone) << zone;
      EXPECT_EQ(d.layout().zone_start_lba(zone), next_lba) << zone;
      EXPECT_EQ(d.layout().zone_capacity_lbas(zone), size) << zone;
    }
  }
  EXPECT_EQ(info.zone_count, zone);
  EXPECT_EQ(info.capacity_lbas, next_lba);
  // Set 1's first zone starts right after set 0's last.
  const uint32_t first1 = first_zone_of_set[1];
  const uint32_t last0 = first1 - 1;
  EXPECT_EQ(d.device->zone(first1).start_lba, sets[0].count * sets[0].zone_bytes / lba);
  EXPECT_EQ(info.zone_of_lba(d.start(first1) - 1), last0);

  for (uint32_t set = 0; set < sets.size(); ++set) {
    const uint32_t z0 = first_zone_of_set[set];
    const uint64_t cap = d.device->zone(z0).capacity_lbas;
    // Not at the write pointer.
    EXPECT_EQ(d.run(Opcode::kWrite, d.start(z0) + 1, 1, nullptr).status,
              Status::kZoneInvalidWrite)
        << set;
    // Crossing the zone's end, from its write pointer.
    EXPECT_EQ(d.run(Opcode::kWrite, d.start(z0), cap + 1, nullptr).status,
              Status::kZoneBoundaryError)
        << set;
    EXPECT_EQ(d.device->zone(z0).state, ZoneState::kEmpty);
    // Filled to capacity in uneven writes: full, the pointer at the zone end.
    ASSERT_EQ(d.write_random(z0, 3), Status::kSuccess);
    EXPECT_EQ(d.run(Opcode::kWrite, d.start(z0) + 2, 1, nullptr).status,
              Status::kZoneInvalidWrite);
    EXPECT_EQ(d.run(Opcode::kWrite, d.start(z0) + 4, 1, nullptr).status,
              Status::kZoneInvalidWrite);
    ASSERT_EQ(d.write_random(z0, cap / 2), Status::kSuccess);
    EXPECT_EQ(d.device->zone(z0).state, ZoneState::kImplicitlyOpened);
    EXPECT_EQ(d.device->zone(z0).wp_lba, d.start(z0) + 3 + cap / 2);
    ASSERT_EQ(d.write_random(z0, cap - 3 - cap / 2), Status::kSuccess);
    ZoneDescriptor full = d.device->zone(z0);
    EXPECT_EQ(full.state, ZoneState::kFull) << set;
    EXPECT_EQ(full.wp_lba, d.start(z0) + info.zone_size_of(z0)) << set;
    EXPECT_EQ(d.run(Opcode::kWrite, d.start(z0) + cap, 1, nullptr).status, Status::kZoneIsFull);
    EXPECT_TRUE(d.reads_back(z0)) << set;
  }
  // A write from the last zone of set 0 into set 1.
  const uint64_t cap0 = d.device->zone(last0).capacity_lbas;
  ASSERT_EQ(d.write_random(last0, cap0 - 2), Status::kSuccess);
  EXPECT_EQ(d.run(Opcode::kWrite, d.start(last0) + cap0 - 2, 4, nullptr).status,
            Status::kZoneBoundaryError);
  EXPECT_EQ(d.device->zone(last0).wp_lba, d.start(last0) + cap0 - 2);
  EXPECT_EQ(d.device->zone(first1).state, ZoneState::kEmpty);
  // A read across the sets' boundary is refused too.
  std::vector<uint8_t> got;
  EXPECT_EQ(d.read(d.start(first1) - 1, 2, got).status, Status::kZoneBoundaryError);
  // Zone append in a zone of set 1 lands at its write pointer.
  const uint32_t z1 = first1 + 1;
  Command a = d.run(Opcode::kAppend, d.start(z1), 2, nullptr);
  EXPECT_EQ(a.status, Status::kSuccess);
  EXPECT_EQ(a.result_lba, d.start(z1));
  a = d.run(Opcode::kAppend, d.start(z1), 3, nullptr);
  EXPECT_EQ(a.result_lba, d.start(z1) + 2);
  EXPECT_EQ(d.run(Opcode::kAppend, d.start(z1) + 1, 1, nullptr).status, Status::kInvalidField);
}

}  // namespace
}  // namespace zonelab
