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
#include <cstddef>
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
  for (const char* kv : {"flash.channels=4", "flash.dies_per_channel=2", "flash.planes_per_die=2",
                         "flash.blocks_per_plane=16", "flash.pages_per_block=64",
                         "flash.page_size=4KiB", "host.lba_size=4KiB", "store.backing=memory",
                         "zns.max_open=0", "zns.max_active=0", "zns.finish.granularity=0"}) {
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

// `c` formatted as `sets` ("SIZE:COUNT,...") with `parity` placement.
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

// A memory backing that records the ranges the device discards.
class RecordingBacking final : public Backing {
 public:
  explicit RecordingBacking(const ZoneLayout& layout)
      : inner_(make_memory_backing(layout.lba_size_bytes(), layout.sets(),
                                   layout.backing_lbas() - layout.capacity_lbas(),
                                   layout.parity_lbas_per_slot())) {}
  bool stores_data() const override { return inner_->stores_data(); }
  bool write(uint64_t lba, uint32_t nlb, const uint8_t* data) override {
    return inner_->write(lba, nlb, data);
  }
  bool read(uint64_t lba, uint32_t nlb, uint8_t* out) override {
    return inner_->read(lba, nlb, out);
  }
  void discard(uint64_t lba, uint64_t nlb) override {
    discards.emplace_back(lba, nlb);
    inner_->discard(lba, nlb);
  }
  // Whether a discard covered LBAs [lba, lba + nlb).
  bool discarded(uint64_t lba, uint64_t nlb) const {
    for (const auto& [from, count] : discards) {
      if (from <= lba && lba + nlb <= from + count) return true;
    }
    return false;
  }
  std::vector<std::pair<uint64_t, uint64_t>> discards;

 private:
  std::unique_ptr<Backing> inner_;
};

// A device, the data written to each zone (from the zone's start), and
// helpers to look at where pages and parity live.
struct Dev {
  explicit Dev(const Config& c, uint64_t seed = 1, std::unique_ptr<Backing> backing = nullptr)
      : config(c), rng(seed) {
    auto made = make_zns_device(config, sim, std::move(backing));
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
  const FlexSlot& fbg(uint32_t zone) const {
    ZL_ASSERT(slot(zone) != BlockMap::kUnmapped);  // a zone has an FBG from its first write
    return layout().flex_slot(slot(zone));
  }
  uint32_t ppd() const { return static_cast<uint32_t>(config.flash.planes_per_die); }

  // A command for this device's sink, not yet submitted.
  Command command(Opcode op, uint64_t slba, uint64_t nlb, uint8_t* data,
                  ZoneAction action = ZoneAction::kNone) {
    Command c;
    c.opcode = op;
    c.slba = slba;
    c.nlb = static_cast<uint32_t>(nlb);
    c.data = data;
    c.action = action;
    c.sink = &sink;
    return c;
  }
  Command run(Opcode op, uint64_t slba, uint64_t nlb, uint8_t* data,
              ZoneAction action = ZoneAction::kNone) {
    Command c = command(op, slba, nlb, data, action);
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
      EXPECT_TRUE(device->backing().write(start(zone) + page * lpp(), static_cast<uint32_t>(lpp()),
                                          junk.data()));
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
    EXPECT_TRUE(device->backing().read(parity_lba(slot(zone), stripe), static_cast<uint32_t>(lpp()),
                                       out.data()));
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
  // its stripe on a failed die and the stripe's parity is at hand (in the
  // parity buffer while the stripe is being filled, else a copy on a live
  // die).
  bool readable(uint32_t zone, uint32_t page) const {
    if (page >= full_pages(zone) || !failed(flat_die(zone, page))) return true;
    if (layout().parity() == ParityPlacement::kNone) return false;
    const FlexSlot& s = fbg(zone);
    const uint32_t stripe = page / s.data_dies;
    bool parity_alive = device->zone(zone).state != ZoneState::kFull &&
                        (stripe + 1) * s.data_dies > full_pages(zone);
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

// Tenants on their own dies (seed 001 §IV-D) still share channels: a read
// of the reader's die beside a 1 MiB write on the writer's dies of the same
// channel. The write's page transfers are booked for when its data will
// have crossed the host link; with the flexzns preset's back-filling the
// read takes the channel before them and costs what it costs alone, and
// without it waits for the write's link transfer.
TEST(FlexZns, AReadBesideALargeWriteOnOtherDiesOfItsChannelsTakesTheIdleChannel) {
  auto latency = [](bool backfill, bool beside) {
    Config c = *preset_config("flexzns");
    for (const std::string& kv : std::vector<std::string>{
             "flash.pages_per_block=16", "flash.blocks_per_plane=32", "store.backing=memory",
             "zns.parity.placement=separate", "zns.format=4096KiB:8@0-31,4096KiB:8@32-63",
             std::string("flash.channel_backfill=") + (backfill ? "true" : "false")}) {
      EXPECT_TRUE(apply_override(c, kv).ok()) << kv;
    }
    Dev d(c);
    if (!d.ok()) return uint64_t{0};
    EXPECT_EQ(d.write_random(8, 64), Status::kSuccess);  // the reader's data, on flash
    std::vector<uint8_t> big = d.random_bytes(1 << 20);
    std::vector<uint8_t> got(d.lba_bytes());
    Command w = d.command(Opcode::kWrite, d.start(0), big.size() / d.lba_bytes(), big.data());
    Command r = d.command(Opcode::kRead, d.start(8), 1, got.data());
    if (beside) d.device->submit(w);
    d.device->submit(r);
    d.sim.run();
    EXPECT_EQ(r.status, Status::kSuccess);
    EXPECT_TRUE(!beside || w.status == Status::kSuccess);
    // The reader's and the writer's FBGs span every channel.
    EXPECT_EQ(d.fbg(8).first_die, 32u);
    EXPECT_TRUE(!beside || d.fbg(0).first_die < 32);
    return r.latency_ns();
  };
  const uint64_t alone = latency(true, false);
  ASSERT_GT(alone, 0u);
  EXPECT_EQ(latency(false, false), alone);
  EXPECT_EQ(latency(true, true), alone);
  // 1 MiB over the 3.94 GB/s link is 266 us.
  EXPECT_GT(latency(false, true), alone + 266'000);
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

  // The rules in a zone of each set (the second: the first of set 1 stays
  // empty for the write from set 0 below).
  for (uint32_t set = 0; set < sets.size(); ++set) {
    const uint32_t z0 = first_zone_of_set[set] + 1;
    const uint64_t cap = d.device->zone(z0).capacity_lbas;
    // Not at the write pointer.
    EXPECT_EQ(d.run(Opcode::kWrite, d.start(z0) + 1, 1, nullptr).status, Status::kZoneInvalidWrite)
        << set;
    // Crossing the zone's end, from its write pointer.
    EXPECT_EQ(d.run(Opcode::kWrite, d.start(z0), cap + 1, nullptr).status,
              Status::kZoneBoundaryError)
        << set;
    EXPECT_EQ(d.device->zone(z0).state, ZoneState::kEmpty);
    // Filled to capacity in uneven writes: full, the pointer at the zone end.
    ASSERT_EQ(d.write_random(z0, 3), Status::kSuccess);
    EXPECT_EQ(d.run(Opcode::kWrite, d.start(z0) + 2, 1, nullptr).status, Status::kZoneInvalidWrite);
    EXPECT_EQ(d.run(Opcode::kWrite, d.start(z0) + 4, 1, nullptr).status, Status::kZoneInvalidWrite);
    ASSERT_EQ(d.write_random(z0, cap / 2), Status::kSuccess);
    EXPECT_EQ(d.device->zone(z0).state, ZoneState::kImplicitlyOpened);
    EXPECT_EQ(d.device->zone(z0).wp_lba, d.start(z0) + 3 + cap / 2);
    ASSERT_EQ(d.write_random(z0, cap - 3 - cap / 2), Status::kSuccess);
    ZoneDescriptor full = d.device->zone(z0);
    EXPECT_EQ(full.state, ZoneState::kFull) << set;
    EXPECT_EQ(full.wp_lba, d.start(z0) + info.zone_size_of(z0)) << set;
    EXPECT_EQ(d.run(Opcode::kWrite, d.start(z0) + cap - 1, 1, nullptr).status, Status::kZoneIsFull);
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
  const uint32_t z1 = first1 + 2;
  Command a = d.run(Opcode::kAppend, d.start(z1), 2, nullptr);
  EXPECT_EQ(a.status, Status::kSuccess);
  EXPECT_EQ(a.result_lba, d.start(z1));
  a = d.run(Opcode::kAppend, d.start(z1), 3, nullptr);
  EXPECT_EQ(a.result_lba, d.start(z1) + 2);
  EXPECT_EQ(d.run(Opcode::kAppend, d.start(z1) + 1, 1, nullptr).status, Status::kInvalidField);
}

TEST(FlexZns, InZoneParityCapacityIsTheDataDiesShareOfTheZoneSize) {
  const Config flash = small_flex_flash();
  const uint64_t chunk = chunk_bytes(flash);
  // Zones of 2, 4 and 8 dies (the last a superblock).
  const std::vector<SetSpec> sets = {{2 * chunk, 4}, {4 * chunk, 2}, {superblock_bytes(flash), 1}};
  Config c = formatted(flash, sets, "in-zone");
  Dev d(c);
  ASSERT_TRUE(d.ok());
  const DeviceInfo& info = d.device->info();
  const uint64_t lba = c.host.lba_size_bytes;
  ASSERT_EQ(info.zone_sets.size(), sets.size());
  for (uint32_t set = 0; set < sets.size(); ++set) {
    const uint64_t n = sets[set].zone_bytes / chunk;  // dies of a zone
    const uint64_t size = sets[set].zone_bytes / lba;
    const uint64_t cap = size * (n - 1) / n;  // Table I: N-1 data chunks
    const uint32_t zone = info.zone_sets[set].first_zone;
    EXPECT_EQ(info.zone_sets[set].zone_size_lbas, size) << set;
    EXPECT_EQ(info.zone_sets[set].zone_capacity_lbas, cap) << set;
    EXPECT_EQ(d.layout().sets()[set].zone_capacity_lbas, cap) << set;
    for (uint32_t z = zone; z < zone + sets[set].count; ++z) {
      EXPECT_EQ(d.device->zone(z).capacity_lbas, cap) << z;
      EXPECT_EQ(info.zone_capacity_of(z), cap) << z;
      EXPECT_EQ(info.zone_size_of(z), size) << z;
    }
    // The host may write the capacity and no more.
    EXPECT_EQ(d.run(Opcode::kWrite, d.start(zone), cap + 1, nullptr).status,
              Status::kZoneBoundaryError);
    ASSERT_EQ(d.write_random(zone, cap), Status::kSuccess) << set;
    EXPECT_EQ(d.device->zone(zone).state, ZoneState::kFull) << set;
    EXPECT_EQ(d.device->zone(zone).wp_lba, d.start(zone) + size) << set;
    // The zone's FBG: n dies, the last holds the parity, none of the data.
    const FlexSlot& s = d.fbg(zone);
    EXPECT_EQ(s.dies, n) << set;
    EXPECT_EQ(s.data_dies, n - 1) << set;
    ASSERT_EQ(s.parity.size(), 1u) << set;
    EXPECT_EQ(s.parity[0].die, s.first_die + s.dies - 1) << set;
    EXPECT_EQ(s.parity[0].superblock, s.superblock) << set;
    const uint32_t parity_die = d.layout().flex_die(s.parity[0].die);
    for (uint32_t page = 0; page < d.written_pages(zone); ++page) {
      ASSERT_NE(d.flat_die(zone, page), parity_die) << set << " page " << page;
    }
    EXPECT_TRUE(d.reads_back(zone)) << set;
  }
}

// Which FBGs share a die.
bool overlaps(const FlexSlot& a, const FlexSlot& b) {
  return a.first_die < b.first_die + b.dies && b.first_die < a.first_die + a.dies;
}

// The first write of `zone` (one LBA), checking the FBG it took: of the
// free FBGs of its set, one whose dies hold the fewest FBGs of the other
// active zones. Returns the slot.
uint32_t first_write_least_loaded(Dev& d, uint32_t zone) {
  const ZoneLayout& l = d.layout();
  std::vector<uint32_t> load(flash_dies(d.config), 0);
  for (uint32_t other = 0; other < d.device->info().zone_count; ++other) {
    if (d.slot(other) == BlockMap::kUnmapped || !zone_is_active(d.device->zone(other).state)) {
      continue;
    }
    const FlexSlot& s = d.fbg(other);
    for (uint32_t die = s.first_die; die < s.first_die + s.dies; ++die) ++load[die];
  }
  auto cost = [&](uint32_t slot) {
    const FlexSlot& s = l.flex_slot(slot);
    uint64_t sum = 0;
    for (uint32_t die = s.first_die; die < s.first_die + s.dies; ++die) sum += load[die];
    return sum;
  };
  EXPECT_EQ(d.slot(zone), BlockMap::kUnmapped) << zone;
  const std::vector<uint32_t> free = d.device->block_map().free_slots_of(zone);
  EXPECT_FALSE(free.empty());
  uint64_t best = UINT64_MAX;
  for (uint32_t slot : free) best = std::min(best, cost(slot));
  EXPECT_EQ(d.write_random(zone, 1), Status::kSuccess) << zone;
  const uint32_t slot = d.slot(zone);
  EXPECT_NE(std::find(free.begin(), free.end(), slot), free.end()) << zone;
  EXPECT_EQ(l.flex_slot(slot).set, l.set_of_zone(zone)) << zone;
  EXPECT_EQ(cost(slot), best) << "zone " << zone << " took FBG " << slot;
  return slot;
}

TEST(FlexZns, FirstWriteTakesTheFbgOnTheLeastLoadedDies) {
  const Config flash = small_flex_flash();
  const uint32_t dies = flash_dies(flash);
  {
    // One-die zones, two superblocks of them: the first `dies` zones opened
    // in turn land on as many different dies.
    Config c = formatted(flash, {{chunk_bytes(flash), 2 * dies}}, "separate");
    Dev d(c);
    ASSERT_TRUE(d.ok());
    std::set<uint32_t> used;
    for (uint32_t zone = 0; zone < dies; ++zone) {
      first_write_least_loaded(d, zone);
      EXPECT_EQ(d.fbg(zone).dies, 1u);
      used.insert(d.fbg(zone).first_die);
    }
    EXPECT_EQ(used.size(), dies);
    // Only zone 0 stays active: the next zone avoids its die, though the
    // first free FBG in the pool's order lies on it.
    for (uint32_t zone = 1; zone < dies; ++zone) {
      ASSERT_EQ(d.send(zone, ZoneAction::kFinish), Status::kSuccess);
    }
    const std::vector<uint32_t> free = d.device->block_map().free_slots_of(dies);
    ASSERT_FALSE(free.empty());
    EXPECT_EQ(d.layout().flex_slot(free.front()).first_die, d.fbg(0).first_die);
    first_write_least_loaded(d, dies);
    EXPECT_NE(d.fbg(dies).first_die, d.fbg(0).first_die);
  }
  {
    // Two-die zones: open zones' FBGs never share a die while a free FBG
    // that shares none exists.
    const uint32_t per_superblock = dies / 2;
    Config c = formatted(flash, {{2 * chunk_bytes(flash), 2 * per_superblock}}, "separate");
    Dev d(c);
    ASSERT_TRUE(d.ok());
    auto check_open = [&](uint32_t zone) {
      std::vector<uint32_t> active;
      for (uint32_t z = 0; z < zone; ++z) {
        if (zone_is_active(d.device->zone(z).state)) active.push_back(z);
      }
      bool disjoint_free = false;
      for (uint32_t slot : d.device->block_map().free_slots_of(zone)) {
        bool clear = true;
        for (uint32_t z : active) clear = clear && !overlaps(d.layout().flex_slot(slot), d.fbg(z));
        disjoint_free = disjoint_free || clear;
      }
      first_write_least_loaded(d, zone);
      if (disjoint_free) {
        for (uint32_t z : active) {
          EXPECT_FALSE(overlaps(d.fbg(zone), d.fbg(z))) << "zones " << zone << " and " << z;
        }
      }
      return disjoint_free;
    };
    for (uint32_t zone = 0; zone < per_superblock; ++zone) EXPECT_TRUE(check_open(zone));
    for (uint32_t zone = 1; zone < per_superblock; ++zone) {
      ASSERT_EQ(d.send(zone, ZoneAction::kFinish), Status::kSuccess);
    }
    // Zone 0 active; the second superblock's FBGs are free.
    EXPECT_TRUE(check_open(per_superblock));
    EXPECT_NE(d.fbg(per_superblock).first_die, d.fbg(0).first_die);
    for (uint32_t zone = per_superblock + 1; zone < 2 * per_superblock; ++zone) check_open(zone);
  }
  {
    // A failed die takes no new FBG while an FBG on live dies is free.
    Config c = formatted(flash, {{chunk_bytes(flash), 2 * dies}}, "separate");
    Dev d(c);
    ASSERT_TRUE(d.ok());
    const uint32_t lost = d.layout().flex_die(0);
    ASSERT_TRUE(d.fail(lost).ok());
    for (uint32_t zone = 0; zone < 2 * (dies - 1); ++zone) {
      ASSERT_EQ(d.write_random(zone, 1), Status::kSuccess);
      EXPECT_NE(d.layout().flex_die(d.fbg(zone).first_die), lost) << zone;
    }
  }
}

TEST(FlexZns, ParityOfEveryStripeIsTheXorOfItsDataPages) {
  const Config flash = small_flex_flash();
  Config c = formatted(flash, two_sets(flash), "separate");
  Dev d(c, 4);
  ASSERT_TRUE(d.ok());
  const uint32_t narrow = 0;
  const uint32_t wide = d.device->info().zone_sets[1].first_zone;
  const uint64_t lpp = d.lpp();
  // Uneven writes of `pages` pages in all.
  auto fill = [&](uint32_t zone, uint64_t pages) {
    const uint64_t target = pages * lpp;
    for (uint64_t piece : {uint64_t{4}, uint64_t{13}, uint64_t{1}, uint64_t{29}, target}) {
      const uint64_t nlb = std::min(piece, target - d.written_lbas(zone));
      if (nlb == 0) break;
      ASSERT_EQ(d.write_random(zone, nlb), Status::kSuccess);
    }
  };
  ASSERT_EQ(d.write_random(wide, 1), Status::kSuccess);  // maps its FBG
  ASSERT_EQ(d.write_random(narrow, 1), Status::kSuccess);
  const uint32_t dd_wide = d.fbg(wide).data_dies;
  const uint32_t dd_narrow = d.fbg(narrow).data_dies;
  // Separate parity: every die of an FBG holds data.
  EXPECT_EQ(dd_wide, two_sets(c)[1].zone_bytes / chunk_bytes(c));
  EXPECT_EQ(dd_narrow, two_sets(c)[0].zone_bytes / chunk_bytes(c));
  fill(wide, 10 * dd_wide + 3);  // a partial last stripe
  fill(narrow, 7 * dd_narrow + 1);

  uint64_t programs = 0;
  for (uint32_t zone : {wide, narrow}) {
    const FlexSlot& s = d.fbg(zone);
    ASSERT_EQ(s.parity.size(), parity_copies(c, s)) << zone;
    if (s.parity.size() == 2) {
      EXPECT_NE(s.parity[0].die, s.parity[1].die);
    } else {
      EXPECT_FALSE(s.parity[0].die >= s.first_die && s.parity[0].die < s.first_die + s.dies)
          << "the parity of an FBG lies outside it";
    }
    ASSERT_GT(d.stripes_with_data(zone), d.full_pages(zone) / s.data_dies);  // a partial stripe
    for (uint32_t stripe = 0; stripe < d.stripes_with_data(zone); ++stripe) {
      std::vector<uint8_t> xored = d.xor_of_stripe(zone, stripe);
      EXPECT_NE(xored, std::vector<uint8_t>(xored.size(), 0));
      EXPECT_EQ(d.stored_parity(zone, stripe), xored) << "zone " << zone << " stripe " << stripe;
    }
    programs += uint64_t{d.full_pages(zone) / s.data_dies} * parity_copies(c, s);
  }
  EXPECT_EQ(d.parity_programs(), programs);
  EXPECT_EQ(d.device->parity_counters().stripes_programmed, programs);

  // Finishing a zone sends its partial stripe's parity to flash.
  ASSERT_EQ(d.send(wide, ZoneAction::kFinish), Status::kSuccess);
  ASSERT_EQ(d.send(narrow, ZoneAction::kFinish), Status::kSuccess);
  programs += parity_copies(c, d.fbg(wide)) + parity_copies(c, d.fbg(narrow));
  EXPECT_EQ(d.parity_programs(), programs);
  for (uint32_t zone : {wide, narrow}) {
    const uint32_t last = d.stripes_with_data(zone) - 1;
    EXPECT_EQ(d.stored_parity(zone, last), d.xor_of_stripe(zone, last)) << zone;
    EXPECT_TRUE(d.reads_back(zone));
  }
}

// The first page of zone `zone`'s first stripe on flat die `flat`.
uint32_t page_on_die(const Dev& d, uint32_t zone, uint32_t flat) {
  for (uint32_t page = 0; page < d.fbg(zone).data_dies; ++page) {
    if (d.flat_die(zone, page) == flat) return page;
  }
  ADD_FAILURE() << "zone " << zone << " has no data on die " << flat;
  return 0;
}

TEST(FlexZns, OneFailedDieIsRebuiltFromItsStripeWithoutReadingTheLostData) {
  const Config flash = small_flex_flash();
  Config c = formatted(flash, two_sets(flash), "separate");
  Dev d(c, 5);
  ASSERT_TRUE(d.ok());
  const uint32_t narrow = 0;
  const uint32_t other = 1;
  const uint32_t wide = d.device->info().zone_sets[1].first_zone;
  const uint64_t lpp = d.lpp();
  ASSERT_EQ(d.write_random(narrow, 1), Status::kSuccess);
  const uint32_t dd = d.fbg(narrow).data_dies;
  // The die of the narrow zone's first data page: its tail stripe's only page.
  const uint32_t lost_die = d.layout().flex_die(d.fbg(narrow).first_die);
  EXPECT_EQ(d.flat_die(narrow, 0), lost_die);
  EXPECT_EQ(d.layout().flex_die(d.layout().die_of_page(d.slot(narrow), 0)), lost_die);
  ASSERT_EQ(d.write_random(narrow, (20 * dd + 1) * lpp - 1), Status::kSuccess);
  ASSERT_EQ(d.write_random(other, (5 * dd + 1) * lpp), Status::kSuccess);
  ASSERT_EQ(d.write_random(wide, 1), Status::kSuccess);
  const uint32_t dd_wide = d.fbg(wide).data_dies;
  // The wide zone's tail stripe ends on the lost die.
  const uint32_t at = page_on_die(d, wide, lost_die);
  ASSERT_LT(at + 1, dd_wide);
  ASSERT_EQ(d.write_random(wide, (6 * dd_wide + at + 1) * lpp - 1), Status::kSuccess);

  const uint64_t probe = d.start(wide) + at * lpp;  // a page of a full stripe
  const uint64_t healthy_ns = d.idle_read_latency(probe, lpp);

  ASSERT_TRUE(d.fail(lost_die).ok());
  EXPECT_TRUE(d.failed(lost_die));
  uint64_t lost = 0;
  for (uint32_t zone : {narrow, other, wide}) lost += d.clobber_lost(zone);
  EXPECT_GE(lost, (20u + 1u) + (6u + 1u));  // a page of each stripe, tails included
  std::vector<uint8_t> junk(d.page_bytes());
  ASSERT_TRUE(d.device->backing().read(d.start(narrow), static_cast<uint32_t>(lpp), junk.data()));
  EXPECT_NE(junk, d.expected(narrow, 0, lpp));

  for (uint32_t zone : {narrow, other, wide}) EXPECT_TRUE(d.reads_back(zone)) << zone;
  EXPECT_EQ(d.device->parity_counters().rebuilt_pages, lost);
  EXPECT_GT(d.device->parity_counters().rebuild_reads, 0u);
  EXPECT_EQ(d.device->parity_counters().unrecoverable_reads, 0u);

  // The rebuild reads the rest of the stripe: slower than the page alone.
  const uint64_t rebuilt_ns = d.idle_read_latency(probe, lpp);
  EXPECT_GT(rebuilt_ns, healthy_ns);
  std::vector<uint8_t> got;
  ASSERT_EQ(d.read(probe, lpp, got).status, Status::kSuccess);
  EXPECT_EQ(got, d.expected(wide, at * lpp, lpp));

  // Data written after the failure: its pages on the failed die are never
  // programmed, and come back from the stripe as well.
  ASSERT_EQ(d.write_random(wide, 2 * dd_wide * lpp + 1), Status::kSuccess);
  ASSERT_EQ(d.write_random(narrow, 3 * lpp), Status::kSuccess);
  for (uint32_t zone : {narrow, wide}) {
    d.clobber_lost(zone);
    EXPECT_TRUE(d.reads_back(zone)) << zone;
  }
}

// Reads each page of the zone's data alone; each must come back right or
// fail with UNRECOVERED_READ_ERROR, as readable() says. Returns the failed
// reads; counts the lost pages read back in `rebuilt`.
uint64_t check_pages(Dev& d, uint32_t zone, uint64_t& rebuilt) {
  uint64_t failed = 0;
  const uint64_t lpp = d.lpp();
  for (uint32_t page = 0; page < d.written_pages(zone); ++page) {
    const uint64_t nlb = std::min<uint64_t>(lpp, d.written_lbas(zone) - page * lpp);
    std::vector<uint8_t> got;
    Command c = d.read(d.start(zone) + page * lpp, nlb, got);
    if (d.readable(zone, page)) {
      EXPECT_EQ(c.status, Status::kSuccess) << "zone " << zone << " page " << page;
      EXPECT_EQ(got, d.expected(zone, page * lpp, nlb)) << "zone " << zone << " page " << page;
      if (page < d.full_pages(zone) && d.failed(d.flat_die(zone, page))) ++rebuilt;
    } else {
      EXPECT_EQ(c.status, Status::kUnrecoveredReadError) << "zone " << zone << " page " << page;
      ++failed;
    }
  }
  return failed;
}

TEST(FlexZns, ASecondFailureInAStripeFailsItsReadsAndNeverReturnsWrongData) {
  const Config flash = small_flex_flash();
  Config c = formatted(flash, two_sets(flash), "separate");
  Dev d(c, 6);
  ASSERT_TRUE(d.ok());
  const uint32_t wide = d.device->info().zone_sets[1].first_zone;
  const uint64_t lpp = d.lpp();
  ASSERT_EQ(d.write_random(wide, 1), Status::kSuccess);
  const FlexSlot& w = d.fbg(wide);
  const uint32_t dd_wide = w.data_dies;
  // Narrow zones open side by side; the one whose dies hold neither parity
  // copy of the wide zone loses both its dies (two of the wide zone's too).
  auto holds_wide_parity = [&](const FlexSlot& s) {
    for (const ParityChunk& chunk : w.parity) {
      if (chunk.die >= s.first_die && chunk.die < s.first_die + s.dies) return true;
    }
    return false;
  };
  uint32_t narrow = UINT32_MAX;
  for (uint32_t zone = 0; zone < d.device->info().zone_sets[0].zone_count; ++zone) {
    ASSERT_EQ(d.write_random(zone, 1), Status::kSuccess);
    if (!holds_wide_parity(d.fbg(zone))) {
      narrow = zone;
      break;
    }
  }
  ASSERT_NE(narrow, UINT32_MAX);
  const FlexSlot& s = d.fbg(narrow);
  ASSERT_EQ(s.data_dies, 2u);
  const uint32_t first = d.layout().flex_die(s.first_die);
  const uint32_t second = d.layout().flex_die(s.first_die + 1);
  ASSERT_EQ(d.write_random(narrow, (5 * s.data_dies + 1) * lpp - 1), Status::kSuccess);
  // The wide zone's tail stripe holds a page on one failed die, not the other.
  const uint32_t tail = std::min(page_on_die(d, wide, first), page_on_die(d, wide, second)) + 1;
  ASSERT_LT(tail, dd_wide);
  ASSERT_EQ(d.write_random(wide, (5 * dd_wide + tail) * lpp - 1), Status::kSuccess);

  ASSERT_TRUE(d.fail(first).ok());
  ASSERT_TRUE(d.fail(second).ok());
  d.clobber_lost(narrow);
  d.clobber_lost(wide);

  uint64_t rebuilt = 0;
  uint64_t failed = 0;
  for (uint32_t zone : {narrow, wide}) {
    uint64_t zone_rebuilt = 0;
    const uint64_t zone_failed = check_pages(d, zone, zone_rebuilt);
    // Every full stripe lost two pages; the tail's lost page alone comes back.
    EXPECT_GE(zone_failed, 5u * 2u) << zone;
    EXPECT_GE(zone_rebuilt, 1u) << zone;
    rebuilt += zone_rebuilt;
    failed += zone_failed;
    // A read touching a lost page fails as a whole.
    std::vector<uint8_t> got;
    EXPECT_EQ(d.read(d.start(zone), d.written_lbas(zone), got).status,
              Status::kUnrecoveredReadError);
    ++failed;
  }
  EXPECT_EQ(d.device->parity_counters().unrecoverable_reads, failed);
  EXPECT_GE(d.device->parity_counters().rebuilt_pages, rebuilt);
  // A read of live pages only still succeeds.
  for (uint32_t page = 0; page < dd_wide; ++page) {
    if (d.failed(d.flat_die(wide, page))) continue;
    std::vector<uint8_t> got;
    ASSERT_EQ(d.read(d.start(wide) + page * lpp, lpp, got).status, Status::kSuccess);
    EXPECT_EQ(got, d.expected(wide, page * lpp, lpp));
  }
}

TEST(FlexZns, ASuperblockWideZoneRebuildsFromItsSecondParityCopy) {
  const Config flash = small_flex_flash();
  Config c = formatted(flash, two_sets(flash), "separate");
  Dev d(c, 7);
  ASSERT_TRUE(d.ok());
  const uint32_t wide = d.device->info().zone_sets[1].first_zone;
  const uint64_t lpp = d.lpp();
  ASSERT_EQ(d.write_random(wide, 1), Status::kSuccess);
  const FlexSlot& s = d.fbg(wide);
  ASSERT_EQ(s.dies, flash_dies(c));
  ASSERT_EQ(s.parity.size(), 2u);
  ASSERT_NE(s.parity[0].die, s.parity[1].die);
  const uint32_t copy0 = d.layout().flex_die(s.parity[0].die);
  ASSERT_EQ(d.write_random(wide, (4 * s.data_dies + 5) * lpp - 1), Status::kSuccess);
  for (uint32_t stripe = 0; stripe < d.stripes_with_data(wide); ++stripe) {
    EXPECT_EQ(d.layout().parity_page(d.slot(wide), 0, stripe).plane / d.ppd(), copy0);
    EXPECT_NE(d.layout().parity_page(d.slot(wide), 1, stripe).plane / d.ppd(), copy0);
  }
  // Copy 0's die holds data of the zone too (the FBG spans every die).
  page_on_die(d, wide, copy0);

  const uint64_t busy = d.device->flash().die_busy_ns(copy0);
  ASSERT_TRUE(d.fail(copy0).ok());
  const uint64_t lost = d.clobber_lost(wide);
  EXPECT_GE(lost, 4u);
  uint64_t rebuilt = 0;
  EXPECT_EQ(check_pages(d, wide, rebuilt), 0u);
  EXPECT_EQ(rebuilt, lost);
  EXPECT_TRUE(d.reads_back(wide));
  EXPECT_EQ(d.device->parity_counters().rebuilt_pages, 2 * lost);
  EXPECT_EQ(d.device->parity_counters().unrecoverable_reads, 0u);
  // Nothing was read from the failed die, its parity copy included.
  EXPECT_EQ(d.device->flash().die_busy_ns(copy0), busy);
}

TEST(FlexZns, InZoneParityDieLossNeedsNoRebuildADataDieLossIsRebuilt) {
  const Config flash = small_flex_flash();
  Config c =
      formatted(flash, {{4 * chunk_bytes(flash), 2}, {superblock_bytes(flash), 2}}, "in-zone");
  for (bool parity_die : {true, false}) {
    SCOPED_TRACE(parity_die ? "parity die fails" : "data die fails");
    Dev d(c, 8);
    ASSERT_TRUE(d.ok());
    const uint32_t zone = 0;
    const uint64_t lpp = d.lpp();
    ASSERT_EQ(d.write_random(zone, 1), Status::kSuccess);
    const FlexSlot& s = d.fbg(zone);
    ASSERT_EQ(s.data_dies, s.dies - 1);
    ASSERT_EQ(d.write_random(zone, (6 * s.data_dies + 2) * lpp - 1), Status::kSuccess);
    // In-zone parity is XOR too, one copy a stripe.
    for (uint32_t stripe = 0; stripe < d.stripes_with_data(zone); ++stripe) {
      EXPECT_EQ(d.stored_parity(zone, stripe), d.xor_of_stripe(zone, stripe)) << stripe;
    }
    EXPECT_EQ(d.parity_programs(), d.full_pages(zone) / s.data_dies);

    const uint32_t die = d.layout().flex_die(parity_die ? s.parity[0].die : s.first_die);
    const uint64_t busy = d.device->flash().die_busy_ns(die);
    ASSERT_TRUE(d.fail(die).ok());
    const uint64_t lost = d.clobber_lost(zone);
    EXPECT_TRUE(d.reads_back(zone));
    const ZnsDevice::ParityCounters& p = d.device->parity_counters();
    EXPECT_EQ(p.unrecoverable_reads, 0u);
    EXPECT_EQ(d.device->flash().die_busy_ns(die), busy);
    if (parity_die) {
      EXPECT_EQ(lost, 0u);
      EXPECT_EQ(p.rebuilt_pages, 0u);
      EXPECT_EQ(p.rebuild_reads, 0u);
    } else {
      EXPECT_EQ(lost, 6u + 1u);  // a page of each stripe, the tail's included
      EXPECT_EQ(p.rebuilt_pages, lost);
      EXPECT_GT(p.rebuild_reads, 0u);
    }
  }
}

TEST(FlexZns, WithoutParityAFailedDiesPagesAreUnrecoveredReadErrors) {
  const Config flash = small_flex_flash();
  Config c = formatted(flash, two_sets(flash), "none");
  Dev d(c, 9);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d.device->info().backing_lbas(), d.device->info().capacity_lbas);
  const uint32_t narrow = 0;
  const uint32_t wide = d.device->info().zone_sets[1].first_zone;
  const uint64_t lpp = d.lpp();
  ASSERT_EQ(d.write_random(narrow, 1), Status::kSuccess);
  const uint32_t dd = d.fbg(narrow).data_dies;
  EXPECT_EQ(dd, d.fbg(narrow).dies);
  EXPECT_TRUE(d.fbg(narrow).parity.empty());
  ASSERT_EQ(d.write_random(narrow, (3 * dd + 1) * lpp - 1), Status::kSuccess);
  ASSERT_EQ(d.write_random(wide, (2 * superblock_bytes(c) / chunk_bytes(c) + 3) * lpp),
            Status::kSuccess);
  const uint32_t die = d.flat_die(narrow, 0);
  ASSERT_TRUE(d.fail(die).ok());
  uint64_t lost = 0;
  for (uint32_t zone : {narrow, wide}) lost += d.clobber_lost(zone);
  uint64_t rebuilt = 0;
  uint64_t failed = 0;
  for (uint32_t zone : {narrow, wide}) failed += check_pages(d, zone, rebuilt);
  EXPECT_EQ(failed, lost);
  EXPECT_GE(failed, 4u + 2u);
  EXPECT_EQ(rebuilt, 0u);
  EXPECT_EQ(d.device->parity_counters().rebuilt_pages, 0u);
  EXPECT_EQ(d.device->parity_counters().unrecoverable_reads, failed);
  EXPECT_EQ(d.parity_programs(), 0u);
}

TEST(FlexZns, RecoveredRecomputesATailStripesParityACrashLeftCorrupt) {
  const Config flash = small_flex_flash();
  Config c = formatted(flash, two_sets(flash), "separate");
  Dev d(c, 10);
  ASSERT_TRUE(d.ok());
  const uint32_t narrow = 0;
  const uint32_t wide = d.device->info().zone_sets[1].first_zone;
  const uint64_t lpp = d.lpp();
  ASSERT_EQ(d.write_random(narrow, 1), Status::kSuccess);
  ASSERT_EQ(d.write_random(narrow, (4 * d.fbg(narrow).data_dies + 1) * lpp - 1), Status::kSuccess);
  const uint32_t die = d.flat_die(narrow, d.full_pages(narrow) - 1);  // on the tail stripe
  ASSERT_EQ(d.write_random(wide, 1), Status::kSuccess);
  const uint32_t at = page_on_die(d, wide, die);
  ASSERT_LT(at + 1, d.fbg(wide).data_dies);
  ASSERT_EQ(d.write_random(wide, (3 * d.fbg(wide).data_dies + at + 1) * lpp - 1), Status::kSuccess);

  // A process killed mid-write leaves the parity buffer of the stripe being
  // filled behind its data.
  for (uint32_t zone : {narrow, wide}) {
    const uint32_t tail = d.stripes_with_data(zone) - 1;
    ASSERT_NE(d.full_pages(zone) % d.fbg(zone).data_dies, 0u) << zone;
    std::vector<uint8_t> junk = d.random_bytes(d.page_bytes());
    ASSERT_TRUE(d.device->backing().write(d.parity_lba(d.slot(zone), tail),
                                          static_cast<uint32_t>(lpp), junk.data()));
    EXPECT_NE(d.stored_parity(zone, tail), d.xor_of_stripe(zone, tail));
  }
  d.device->recovered();
  for (uint32_t zone : {narrow, wide}) {
    for (uint32_t stripe = 0; stripe < d.stripes_with_data(zone); ++stripe) {
      EXPECT_EQ(d.stored_parity(zone, stripe), d.xor_of_stripe(zone, stripe))
          << "zone " << zone << " stripe " << stripe;
    }
  }

  ASSERT_TRUE(d.fail(die).ok());
  uint64_t lost = 0;
  for (uint32_t zone : {narrow, wide}) lost += d.clobber_lost(zone);
  for (uint32_t zone : {narrow, wide}) EXPECT_TRUE(d.reads_back(zone)) << zone;
  EXPECT_EQ(d.device->parity_counters().rebuilt_pages, lost);
  // The tail pages on the failed die in particular.
  for (uint32_t zone : {narrow, wide}) {
    const uint32_t page = d.full_pages(zone) - 1;
    ASSERT_EQ(d.flat_die(zone, page), die) << zone;
    std::vector<uint8_t> got;
    ASSERT_EQ(d.read(d.start(zone) + page * lpp, lpp, got).status, Status::kSuccess);
    EXPECT_EQ(got, d.expected(zone, page * lpp, lpp)) << zone;
  }
}

TEST(FlexZns, ExportImportKeepsFailedDiesWritePointersAndFbgs) {
  const Config flash = small_flex_flash();
  Config c = formatted(flash, two_sets(flash), "separate");
  Dev a(c, 11);
  ASSERT_TRUE(a.ok());
  const uint32_t wide = a.device->info().zone_sets[1].first_zone;
  const uint64_t lpp = a.lpp();
  ASSERT_EQ(a.write_random(0, (3 * 2 + 1) * lpp), Status::kSuccess);
  ASSERT_EQ(a.write_random(1, 2 * lpp + 1), Status::kSuccess);
  ASSERT_EQ(a.send(1, ZoneAction::kFinish), Status::kSuccess);
  ASSERT_EQ(a.write_random(wide, 1), Status::kSuccess);
  ASSERT_EQ(a.write_random(wide, (2 * a.fbg(wide).data_dies + 3) * lpp - 1), Status::kSuccess);
  ASSERT_EQ(a.send(wide + 1, ZoneAction::kOpen), Status::kSuccess);
  // A die of zone 0 and one of zone 1, neither holding the parity of the
  // narrow zones, and not both the wide zone's copies (a die a stripe is
  // lost, and every stripe keeps its parity).
  std::set<uint32_t> parity_dies;
  for (uint32_t zone : {0u, 1u}) {
    for (const ParityChunk& chunk : a.fbg(zone).parity) {
      parity_dies.insert(a.layout().flex_die(chunk.die));
    }
  }
  auto pick = [&](uint32_t zone) {
    for (uint32_t page = 0; page < a.fbg(zone).data_dies; ++page) {
      if (parity_dies.count(a.flat_die(zone, page)) == 0) return a.flat_die(zone, page);
    }
    ADD_FAILURE() << "every die of zone " << zone << " holds parity";
    return a.flat_die(zone, 0);
  };
  const uint32_t die0 = pick(0);
  const uint32_t die1 = pick(1);
  ASSERT_NE(die0, die1);
  const std::vector<ParityChunk>& copies = a.fbg(wide).parity;
  ASSERT_EQ(copies.size(), 2u);
  ASSERT_FALSE(
      std::set<uint32_t>({die0, die1}) ==
      std::set<uint32_t>({a.layout().flex_die(copies[0].die), a.layout().flex_die(copies[1].die)}));
  ASSERT_TRUE(a.fail(die0).ok());
  ASSERT_TRUE(a.fail(die1).ok());

  ImageState state;
  a.device->export_state(state);
  Dev b(c, 12);
  ASSERT_TRUE(b.ok());
  Outcome imported = b.device->import_state(state);
  ASSERT_TRUE(imported.ok()) << imported.error();

  uint32_t failed = 0;
  for (uint32_t flat = 0; flat < flash_dies(c); ++flat) {
    EXPECT_EQ(b.failed(flat), a.failed(flat)) << flat;
    failed += b.failed(flat) ? 1u : 0u;
  }
  EXPECT_EQ(failed, 2u);
  EXPECT_TRUE(b.failed(die0));
  EXPECT_TRUE(b.failed(die1));
  for (uint32_t zone = 0; zone < a.device->info().zone_count; ++zone) {
    ZoneDescriptor x = a.device->zone(zone);
    ZoneDescriptor y = b.device->zone(zone);
    EXPECT_EQ(y.start_lba, x.start_lba) << zone;
    EXPECT_EQ(y.capacity_lbas, x.capacity_lbas) << zone;
    EXPECT_EQ(y.wp_lba, x.wp_lba) << zone;
    EXPECT_EQ(y.state, x.state) << zone;
    EXPECT_EQ(b.slot(zone), a.slot(zone)) << zone;
  }
  EXPECT_EQ(b.device->zone(0).wp_lba, b.start(0) + a.written_lbas(0));
  EXPECT_EQ(b.device->zone(1).state, ZoneState::kFull);
  EXPECT_EQ(b.device->zone(wide + 1).state, ZoneState::kExplicitlyOpened);

  // With the data and parity carried over (an image's data region), the
  // lost pages come back from the imported device as from the first.
  b.shadow = a.shadow;
  std::vector<uint8_t> buffer;
  for (uint32_t zone = 0; zone < a.device->info().zone_count; ++zone) {
    if (a.written_lbas(zone) == 0) continue;
    const auto nlb = static_cast<uint32_t>(a.written_lbas(zone));
    buffer.resize(nlb * a.lba_bytes());
    ASSERT_TRUE(a.device->backing().read(a.start(zone), nlb, buffer.data()));
    ASSERT_TRUE(b.device->backing().write(b.start(zone), nlb, buffer.data()));
    const uint32_t slot = a.slot(zone);
    const auto parity = static_cast<uint32_t>(a.layout().stripes_of_slot(slot) * lpp);
    buffer.resize(parity * a.lba_bytes());
    ASSERT_TRUE(a.device->backing().read(a.parity_lba(slot, 0), parity, buffer.data()));
    ASSERT_TRUE(b.device->backing().write(b.parity_lba(slot, 0), parity, buffer.data()));
  }
  uint64_t rebuilt = 0;
  for (uint32_t zone : {0u, 1u, wide}) {
    b.clobber_lost(zone);
    check_pages(b, zone, rebuilt);
  }
  EXPECT_GT(rebuilt, 0u);
  // Writes go on at the imported write pointer.
  EXPECT_EQ(b.run(Opcode::kWrite, b.start(0), 1, nullptr).status, Status::kZoneInvalidWrite);
  ASSERT_EQ(b.write_random(0, lpp), Status::kSuccess);
  EXPECT_EQ(b.device->zone(0).wp_lba, b.start(0) + b.written_lbas(0));
  b.clobber_lost(0);
  check_pages(b, 0, rebuilt);
}

TEST(FlexZns, AResetZoneStartsItsParityAfreshOnTheSameFbg) {
  const Config flash = small_flex_flash();
  Config c = formatted(flash, two_sets(flash), "separate");
  Dev d(c, 13);
  ASSERT_TRUE(d.ok());
  const ZoneSetInfo& set = d.device->info().zone_sets[1];
  const uint32_t wide = set.first_zone;
  const uint64_t lpp = d.lpp();
  // The set's other zones take every FBG but one: the zone gets its FBG back.
  for (uint32_t zone = wide + 1; zone < set.first_zone + set.zone_count; ++zone) {
    ASSERT_EQ(d.write_random(zone, 1), Status::kSuccess);
  }
  ASSERT_EQ(d.write_random(wide, 1), Status::kSuccess);
  const uint32_t slot = d.slot(wide);
  const uint32_t dd = d.fbg(wide).data_dies;
  ASSERT_EQ(d.write_random(wide, (3 * dd + 2) * lpp - 1), Status::kSuccess);
  ASSERT_EQ(d.send(wide, ZoneAction::kReset), Status::kSuccess);
  EXPECT_EQ(d.slot(wide), BlockMap::kUnmapped);
  EXPECT_EQ(d.device->zone(wide).state, ZoneState::kEmpty);
  d.shadow[wide].clear();
  ASSERT_EQ(d.write_random(wide, (2 * dd + 5) * lpp), Status::kSuccess);
  EXPECT_EQ(d.slot(wide), slot);
  for (uint32_t stripe = 0; stripe < d.stripes_with_data(wide); ++stripe) {
    EXPECT_EQ(d.stored_parity(wide, stripe), d.xor_of_stripe(wide, stripe)) << stripe;
  }
  ASSERT_TRUE(d.fail(d.flat_die(wide, 1)).ok());
  EXPECT_GT(d.clobber_lost(wide), 0u);
  EXPECT_TRUE(d.reads_back(wide));
}

TEST(FlexZns, RebuildsPartsOfPagesWhenAPageHoldsSeveralLbas) {
  // 16 KiB pages of four 4 KiB LBAs.
  const Config flash = small_flex_flash({"flash.page_size=16KiB"});
  Config c = formatted(flash, two_sets(flash), "separate");
  Dev d(c, 14);
  ASSERT_TRUE(d.ok());
  const uint64_t lpp = d.lpp();
  ASSERT_GT(lpp, 1u);
  const uint32_t narrow = 0;
  const uint32_t wide = d.device->info().zone_sets[1].first_zone;
  ASSERT_EQ(d.write_random(narrow, 3), Status::kSuccess);
  ASSERT_EQ(d.write_random(narrow, 3 * d.fbg(narrow).data_dies * lpp + 2), Status::kSuccess);
  ASSERT_EQ(d.write_random(wide, 2), Status::kSuccess);
  ASSERT_EQ(d.write_random(wide, 2 * d.fbg(wide).data_dies * lpp + 3), Status::kSuccess);
  for (uint32_t zone : {narrow, wide}) {
    for (uint32_t stripe = 0; stripe < d.stripes_with_data(zone); ++stripe) {
      EXPECT_EQ(d.stored_parity(zone, stripe), d.xor_of_stripe(zone, stripe))
          << "zone " << zone << " stripe " << stripe;
    }
  }
  const uint32_t die = d.flat_die(narrow, 0);
  ASSERT_TRUE(d.fail(die).ok());
  for (uint32_t zone : {narrow, wide}) {
    EXPECT_GT(d.clobber_lost(zone), 0u) << zone;
    EXPECT_TRUE(d.reads_back(zone)) << zone;
    // Single LBAs, and two LBAs across a page boundary, of every lost page.
    for (uint32_t page = 0; page < d.full_pages(zone); ++page) {
      if (d.flat_die(zone, page) != die) continue;
      for (uint64_t lba = page * lpp; lba < (page + 1) * lpp; ++lba) {
        const uint64_t nlb = std::min<uint64_t>(2, d.written_lbas(zone) - lba);
        std::vector<uint8_t> got;
        ASSERT_EQ(d.read(d.start(zone) + lba, nlb, got).status, Status::kSuccess)
            << "zone " << zone << " lba " << lba;
        EXPECT_EQ(got, d.expected(zone, lba, nlb)) << "zone " << zone << " lba " << lba;
      }
    }
  }
  EXPECT_EQ(d.device->parity_counters().unrecoverable_reads, 0u);
}

TEST(FlexZns, ResetAndOfflineDiscardTheZonesParityWithItsData) {
  const Config flash = small_flex_flash();
  Config c = formatted(flash, two_sets(flash), "separate");
  auto layout = ZoneLayout::make(c);
  ASSERT_TRUE(layout.ok()) << layout.error();
  auto owned = std::make_unique<RecordingBacking>(*layout);
  RecordingBacking* backing = owned.get();
  Dev d(c, 15, std::move(owned));
  ASSERT_TRUE(d.ok());
  const uint32_t wide = d.device->info().zone_sets[1].first_zone;
  const uint64_t lpp = d.lpp();
  for (uint32_t zone : {wide, wide + 1}) {
    ASSERT_EQ(d.write_random(zone, 1), Status::kSuccess);
    ASSERT_EQ(d.write_random(zone, (2 * d.fbg(zone).data_dies + 3) * lpp - 1), Status::kSuccess);
  }
  const uint64_t parity_lbas = d.layout().parity_lbas_per_slot();
  ASSERT_EQ(parity_lbas, uint64_t{d.layout().stripes_of_slot(0)} * lpp);

  // Offline: the zone's data and its FBG's parity go.
  const uint32_t offline_slot = d.slot(wide + 1);
  ASSERT_TRUE(d.device->inject_zone(wide + 1, ZoneState::kOffline).ok());
  EXPECT_TRUE(backing->discarded(d.start(wide + 1), d.layout().zone_size_lbas(wide + 1)));
  EXPECT_TRUE(backing->discarded(d.parity_lba(offline_slot, 0), parity_lbas))
      << "the parity of an offline zone stays in the backing";

  // Reset: the same.
  const uint32_t reset_slot = d.slot(wide);
  ASSERT_EQ(d.send(wide, ZoneAction::kReset), Status::kSuccess);
  EXPECT_TRUE(backing->discarded(d.start(wide), d.layout().zone_size_lbas(wide)));
  EXPECT_TRUE(backing->discarded(d.parity_lba(reset_slot, 0), parity_lbas))
      << "the parity of a reset zone stays in the backing";
  std::vector<uint8_t> left(parity_lbas * d.lba_bytes());
  ASSERT_TRUE(d.device->backing().read(d.parity_lba(reset_slot, 0),
                                       static_cast<uint32_t>(parity_lbas), left.data()));
  EXPECT_TRUE(std::all_of(left.begin(), left.end(), [](uint8_t b) { return b == 0; }))
      << "the reset zone's parity still reads back from the backing";
}

TEST(FlexZns, ATailStripesParityInTheBufferOutlivesItsParityDie) {
  // The parity of the stripe being filled is in the controller's parity
  // buffer (zns_device.h): it reaches its parity die(s) only when the stripe
  // completes or the zone is finished. Until then a lost page of the stripe
  // comes back from the buffer, whatever became of the parity dies.
  const Config flash = small_flex_flash();
  Config c =
      formatted(flash, {{4 * chunk_bytes(flash), 2}, {superblock_bytes(flash), 2}}, "in-zone");
  Dev d(c, 16);
  ASSERT_TRUE(d.ok());
  const uint32_t zone = 0;
  const uint64_t lpp = d.lpp();
  ASSERT_EQ(d.write_random(zone, 1), Status::kSuccess);
  const FlexSlot& s = d.fbg(zone);
  ASSERT_GE(s.data_dies, 2u);
  // Three full stripes and a tail of one page, on the FBG's first die.
  ASSERT_EQ(d.write_random(zone, (3 * s.data_dies + 1) * lpp - 1), Status::kSuccess);
  const uint32_t tail_page = 3 * s.data_dies;
  const uint32_t data_die = d.flat_die(zone, tail_page);
  const uint32_t parity_die = d.layout().flex_die(s.parity[0].die);
  ASSERT_NE(data_die, parity_die);
  ASSERT_TRUE(d.fail(parity_die).ok());
  ASSERT_TRUE(d.fail(data_die).ok());
  d.clobber_lost(zone);
  // The full stripes' parity was on the failed parity die: their lost pages
  // are gone.
  std::vector<uint8_t> got;
  EXPECT_EQ(d.read(d.start(zone), lpp, got).status, Status::kUnrecoveredReadError);
  // The tail stripe's parity never left the buffer.
  Command tail = d.read(d.start(zone) + tail_page * lpp, lpp, got);
  EXPECT_EQ(tail.status, Status::kSuccess)
      << "a lost page of the stripe being filled is not rebuilt from the parity buffer";
  if (tail.status == Status::kSuccess) {
    EXPECT_EQ(got, d.expected(zone, tail_page * lpp, lpp));
  }
  // Once the zone is finished the tail's parity goes to the (failed) parity
  // die, and the page is lost for good.
  ASSERT_EQ(d.send(zone, ZoneAction::kFinish), Status::kSuccess);
  EXPECT_EQ(d.read(d.start(zone) + tail_page * lpp, lpp, got).status,
            Status::kUnrecoveredReadError);
}

}  // namespace
}  // namespace zonelab
