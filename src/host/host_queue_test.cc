// The host block layer: none keeps arrival order; mq-deadline never has two
// writes to a zone at the device and sends a zone's writes in LBA order, so
// many submitters writing one zone never see ZONE_INVALID_WRITE; ZINC holds
// resets while I/O runs and lets them go by tokens, holds or low
// concurrency; softfinish fills a zone with host writes.
#include "host/host_queue.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <vector>

#include "common/schedulers.h"
#include "host/softfinish.h"
#include "host/zinc.h"
#include "zns/zns_device.h"

namespace zonelab {
namespace {

// Sits between the host queue and the device and watches what reaches it.
class Spy final : public Device, private CompletionSink {
 public:
  explicit Spy(Device& device) : device_(device) {}
  void submit(Command& c) override {
    sinks_[&c] = c.sink;
    order.push_back(&c);
    if (c.opcode == Opcode::kWrite) {
      uint32_t zone = static_cast<uint32_t>(c.slba / info().zone_size_lbas);
      max_writes_in_zone = std::max(max_writes_in_zone, ++writes_in_zone[zone]);
    }
    c.sink = this;
    device_.submit(c);
  }
  const DeviceInfo& info() const override { return device_.info(); }
  ZoneDescriptor zone(uint32_t index) const override { return device_.zone(index); }

  std::vector<Command*> order;
  std::map<uint32_t, int> writes_in_zone;
  int max_writes_in_zone = 0;

 private:
  void on_complete(Command& c) override {
    if (c.opcode == Opcode::kWrite)
      --writes_in_zone[static_cast<uint32_t>(c.slba / info().zone_size_lbas)];
    CompletionSink* sink = sinks_[&c];
    sinks_.erase(&c);
    c.sink = sink;
    sink->on_complete(c);
  }
  Device& device_;
  std::map<Command*, CompletionSink*> sinks_;
};

struct Rig {
  explicit Rig(const std::string& scheduler, std::vector<std::string> overrides = {}) {
    config = *preset_config("small");
    EXPECT_TRUE(apply_override(config, "store.backing=none").ok());
    EXPECT_TRUE(apply_override(config, "host.scheduler=" + scheduler).ok());
    for (const auto& kv : overrides) EXPECT_TRUE(apply_override(config, kv).ok()) << kv;
    device = std::move(make_zns_device(config, sim)).value();
    spy = std::make_unique<Spy>(*device);
    auto made = make_scheduler(config.host, device->info());
    EXPECT_TRUE(made.ok());
    host = std::make_unique<HostQueue>(*spy, sim, std::move(made).value(), config.host.queue_depth);
  }
  uint64_t zone_lba(uint32_t zone) const { return zone * device->info().zone_size_lbas; }
  Config config;
  Simulator sim;
  std::unique_ptr<ZnsDevice> device;
  std::unique_ptr<Spy> spy;
  std::unique_ptr<HostQueue> host;
};

class Recorder final : public CompletionSink {
 public:
  void on_complete(Command& c) override {
    done.push_back(&c);
    if (c.status != Status::kSuccess) ++errors;
  }
  std::vector<Command*> done;
  int errors = 0;
};

Command make(Opcode op, uint64_t slba, uint32_t nlb, CompletionSink* sink,
             ZoneAction action = ZoneAction::kNone) {
  Command c;
  c.opcode = op;
  c.slba = slba;
  c.nlb = nlb;
  c.sink = sink;
  c.action = action;
  return c;
}

TEST(HostQueue, NoneSendsInArrivalOrderAndCountsQueueTimeInLatency) {
  Rig rig("none", {"host.queue_depth=1"});
  Recorder rec;
  std::vector<Command> cmds;
  for (uint32_t i = 0; i < 4; ++i) cmds.push_back(make(Opcode::kWrite, i * 4, 4, &rec));
  for (Command& c : cmds) rig.host->submit(c);
  rig.sim.run();
  ASSERT_EQ(rig.spy->order.size(), 4u);
  for (uint32_t i = 0; i < 4; ++i) EXPECT_EQ(rig.spy->order[i], &cmds[i]);
  EXPECT_EQ(rec.errors, 0);
  // All were submitted at 0; the last waited for the three before it.
  EXPECT_GT(cmds[3].latency_ns(), 3 * cmds[0].latency_ns() - 10'000);
  EXPECT_EQ(rig.host->counters().max_queued, 3u);
}

// Eight submitters write one zone 4 KiB at a time: each takes the next
// offset and submits it after a random think time, so writes of the zone
// wait in the scheduler while others are at the device.
struct ZoneWriteRun {
  int errors = 0;
  uint64_t writes = 0;
  uint64_t wp = 0;
  uint64_t end = 0;
  int max_writes_in_zone = 0;
};

ZoneWriteRun eight_submitters(const std::string& scheduler) {
  Rig rig(scheduler);
  struct Submitter final : CompletionSink, EventHandler {
    Rig* rig = nullptr;
    uint64_t* next = nullptr;
    uint64_t end = 0;
    std::mt19937_64 rng;
    Command command;
    int errors = 0;
    uint64_t writes = 0;
    void go() {
      if (*next >= end) return;
      command = make(Opcode::kWrite, (*next)++, 1, this);
      ++writes;
      rig->host->submit(command);
    }
    void on_complete(Command& c) override {
      if (c.status != Status::kSuccess) ++errors;
      rig->sim.schedule_after(rng() % 20'000, this, 0);
    }
    void on_event(uint64_t) override { go(); }
  };
  uint64_t next = rig.zone_lba(3);
  uint64_t end = next + rig.device->info().zone_capacity_lbas / 8;
  std::vector<Submitter> submitters(8);
  for (size_t i = 0; i < submitters.size(); ++i) {
    submitters[i].rig = &rig;
    submitters[i].next = &next;
    submitters[i].end = end;
    submitters[i].rng.seed(i + 1);
  }
  for (auto& s : submitters) s.go();
  rig.sim.run();
  ZoneWriteRun run;
  for (auto& s : submitters) {
    run.errors += s.errors;
    run.writes += s.writes;
  }
  run.end = end - rig.zone_lba(3);
  run.wp = rig.device->zone(3).wp_lba - rig.zone_lba(3);
  run.max_writes_in_zone = rig.spy->max_writes_in_zone;
  return run;
}

TEST(MqDeadline, EightSubmittersWritingOneZoneNeverFail) {
  ZoneWriteRun run = eight_submitters("mq-deadline");
  EXPECT_EQ(run.errors, 0);
  EXPECT_EQ(run.writes, run.end);
  EXPECT_EQ(run.wp, run.end);
  EXPECT_EQ(run.max_writes_in_zone, 1);  // zone write locking
  // Without a scheduler the same submitters have several writes of the zone
  // at the device at once.
  EXPECT_GT(eight_submitters("none").max_writes_in_zone, 1);
}

TEST(MqDeadline, WritesOfAZoneGoInLbaOrderWhateverTheArrivalOrder) {
  Rig rig("mq-deadline");
  Recorder rec;
  // A first write holds the zone's lock; the rest arrive out of order.
  std::vector<Command> cmds;
  for (uint64_t lba : {0, 12, 4, 16, 8}) cmds.push_back(make(Opcode::kWrite, lba, 4, &rec));
  for (Command& c : cmds) rig.host->submit(c);
  rig.sim.run();
  EXPECT_EQ(rec.errors, 0);
  std::vector<uint64_t> sent;
  for (Command* c : rig.spy->order) sent.push_back(c->slba);
  EXPECT_EQ(sent, (std::vector<uint64_t>{0, 4, 8, 12, 16}));
  // In arrival order, the device refuses the writes that skip ahead.
  Rig none("none");
  Recorder none_rec;
  std::vector<Command> again;
  for (uint64_t lba : {0, 12, 4, 16, 8}) again.push_back(make(Opcode::kWrite, lba, 4, &none_rec));
  for (Command& c : again) none.host->submit(c);
  none.sim.run();
  EXPECT_GT(none_rec.errors, 0);
}

TEST(MqDeadline, WritesToDifferentZonesGoTogetherAndReadsAreNotLocked) {
  Rig rig("mq-deadline");
  Recorder rec;
  std::vector<Command> cmds;
  for (uint32_t z = 0; z < 4; ++z) cmds.push_back(make(Opcode::kWrite, rig.zone_lba(z), 4, &rec));
  rig.host->submit(cmds[0]);
  rig.sim.run();
  cmds.push_back(make(Opcode::kRead, 0, 4, &rec));
  cmds.push_back(make(Opcode::kRead, 0, 4, &rec));
  for (size_t i = 1; i < cmds.size(); ++i) rig.host->submit(cmds[i]);
  EXPECT_EQ(rig.host->inflight(), cmds.size() - 1);  // nothing held back
  rig.sim.run();
  EXPECT_EQ(rec.errors, 0);
}

TEST(MqDeadline, ManagementPassesStraightThrough) {
  Rig rig("mq-deadline", {"host.queue_depth=1"});
  Recorder rec;
  Command w1 = make(Opcode::kWrite, 0, 4, &rec);
  Command w2 = make(Opcode::kWrite, 4, 4, &rec);
  Command reset = make(Opcode::kZoneManagementSend, rig.zone_lba(5), 0, &rec, ZoneAction::kReset);
  rig.host->submit(w1);
  rig.host->submit(w2);
  rig.host->submit(reset);
  rig.sim.run();
  ASSERT_EQ(rig.spy->order.size(), 3u);
  EXPECT_EQ(rig.spy->order[1], &reset);  // ahead of the waiting write
}

// ZINC on a device whose resets erase (confznspp: 77 ms a full zone).
struct ZincRig : Rig {
  explicit ZincRig(std::vector<std::string> overrides) : Rig("zinc", with_base(overrides)) {}
  static std::vector<std::string> with_base(std::vector<std::string> o) {
    o.insert(o.begin(),
             {"host.zinc.epoch=10ms", "host.zinc.min_concurrency=3", "host.zinc.max_holds=3"});
    return o;
  }
  const Zinc& zinc() const { return static_cast<const Zinc&>(host->scheduler()); }
};

// Keeps `depth` writes in flight to zone 0 until stopped.
struct Writers final : CompletionSink {
  Rig* rig = nullptr;
  std::vector<Command> slots;
  uint64_t next = 0;
  bool stop = false;
  int errors = 0;
  void start(Rig& r, uint32_t depth) {
    rig = &r;
    slots.resize(depth);
    for (auto& s : slots) issue(s);
  }
  void issue(Command& c) {
    c = make(Opcode::kWrite, next, 4, this);
    next += 4;
    rig->host->submit(c);
  }
  void on_complete(Command& c) override {
    if (c.status != Status::kSuccess) ++errors;
    if (!stop) issue(c);
  }
};

struct StopOn final : CompletionSink {
  Writers* writers = nullptr;
  void on_complete(Command&) override { writers->stop = true; }
};

TEST(Zinc, AResetGoesAtOnceWhenLittleIoRuns) {
  ZincRig rig({"host.zinc.write_tokens=1000000"});
  Recorder rec;
  Command fill = make(Opcode::kWrite, rig.zone_lba(2), 64, &rec);
  rig.host->submit(fill);
  rig.sim.run();
  Command reset = make(Opcode::kZoneManagementSend, rig.zone_lba(2), 0, &rec, ZoneAction::kReset);
  uint64_t t = rig.sim.now_ns();
  rig.host->submit(reset);
  EXPECT_EQ(rig.host->inflight(), 1u);  // sent at once
  rig.sim.run();
  EXPECT_EQ(rig.zinc().counters().immediate, 1u);
  EXPECT_LT(reset.complete_ns - t, 10'000'000u);
}

// Zone 2 written, then reset beside 8 writes in flight to zone 0, which
// stop when the reset completes. Returns the reset.
Command reset_under_writers(ZincRig& rig) {
  Recorder rec;
  Command fill = make(Opcode::kWrite, rig.zone_lba(2), 64, &rec);
  rig.host->submit(fill);
  rig.sim.run();
  Writers writers;
  StopOn stop;
  stop.writers = &writers;
  writers.start(rig, 8);
  Command reset = make(Opcode::kZoneManagementSend, rig.zone_lba(2), 0, &stop, ZoneAction::kReset);
  rig.host->submit(reset);
  rig.sim.run();
  EXPECT_EQ(writers.errors, 0);
  EXPECT_EQ(reset.status, Status::kSuccess);
  return reset;
}

TEST(Zinc, UnderLoadAResetWaitsForItsMaxHolds) {
  ZincRig rig({"host.zinc.write_tokens=1000000"});
  Command reset = reset_under_writers(rig);
  // Held three epochs past the first window's end: at least 4 x 10 ms.
  EXPECT_GE(reset.latency_ns(), 40'000'000u);
  EXPECT_EQ(rig.zinc().counters().holds, 3u);
  EXPECT_EQ(rig.zinc().counters().by_max_holds, 1u);
}

TEST(Zinc, UnderLoadEnoughTokensLetAResetGoAtTheFirstEpochEnd) {
  ZincRig rig({"host.zinc.write_tokens=10"});
  Command reset = reset_under_writers(rig);
  EXPECT_EQ(rig.zinc().counters().by_tokens, 1u);
  EXPECT_EQ(rig.zinc().counters().holds, 0u);
  EXPECT_GE(reset.latency_ns(), 10'000'000u);
  EXPECT_LT(reset.latency_ns(), 20'000'000u);
}

TEST(Zinc, ManagementCommandsGoOneAtATime) {
  ZincRig rig({"host.zinc.write_tokens=0", "host.zinc.min_concurrency=0"});
  Recorder rec;
  std::vector<Command> fills, resets;
  for (uint32_t z = 1; z <= 3; ++z)
    fills.push_back(make(Opcode::kWrite, rig.zone_lba(z), 64, &rec));
  for (Command& c : fills) rig.host->submit(c);
  rig.sim.run();
  for (uint32_t z = 1; z <= 3; ++z) {
    resets.push_back(
        make(Opcode::kZoneManagementSend, rig.zone_lba(z), 0, &rec, ZoneAction::kReset));
  }
  for (Command& c : resets) rig.host->submit(c);
  EXPECT_EQ(rig.host->inflight(), 0u);  // min concurrency 0: the first waits a window
  rig.sim.run();
  ASSERT_EQ(rec.errors, 0);
  EXPECT_LT(resets[0].complete_ns, resets[1].complete_ns);
  // Each goes a whole epoch after the one before it went.
  EXPECT_GE(resets[2].complete_ns - resets[1].complete_ns, 10'000'000u - 5'000'000u);
  EXPECT_EQ(rig.zinc().counters().management, 3u);
}

TEST(SoftFinish, FillsTheZoneWithHostWritesOfTheChunkSize) {
  for (const char* scheduler : {"none", "mq-deadline"}) {
    Rig rig(scheduler, {"host.softfinish.chunk=64KiB"});
    Recorder rec;
    Command page = make(Opcode::kWrite, rig.zone_lba(4), 4, &rec);
    rig.host->submit(page);
    rig.sim.run();
    SoftFinish soft(*rig.host, rig.sim, rig.config.host);
    Status status = Status::kInvalidField;
    uint64_t latency = 0;
    soft.start(4, [&](Status s, uint64_t ns) {
      status = s;
      latency = ns;
    });
    rig.sim.run();
    EXPECT_EQ(status, Status::kSuccess) << scheduler;
    EXPECT_EQ(rig.device->zone(4).state, ZoneState::kFull) << scheduler;
    uint64_t remaining = rig.device->info().zone_capacity_lbas - 4;
    EXPECT_EQ(soft.writes(), (remaining + 15) / 16) << scheduler;
    EXPECT_GT(latency, soft.writes() * rig.config.flash.program_latency_ns) << scheduler;
    EXPECT_EQ(
        rig.device->flash().counters().program_pages[static_cast<size_t>(FlashCause::kFinish)],
        0u);  // host writes, not a device fill
  }
}

TEST(SoftFinish, PausesLengthenIt) {
  auto latency_with = [](const std::string& pause) {
    Rig rig("none", {"host.softfinish.chunk=1MiB", "host.softfinish.pause=" + pause});
    Recorder rec;
    Command page = make(Opcode::kWrite, rig.zone_lba(4), 4, &rec);
    rig.host->submit(page);
    rig.sim.run();
    SoftFinish soft(*rig.host, rig.sim, rig.config.host);
    uint64_t latency = 0;
    soft.start(4, [&](Status, uint64_t ns) { latency = ns; });
    rig.sim.run();
    return std::pair<uint64_t, uint64_t>{latency, soft.writes()};
  };
  auto [plain, writes] = latency_with("0ns");
  auto [paused, same] = latency_with("1ms");
  EXPECT_EQ(writes, same);
  EXPECT_EQ(paused - plain, (writes - 1) * 1'000'000);
}

TEST(SoftFinish, ChunkMustBeAMultipleOfTheLbaSize) {
  Rig rig("none", {"host.softfinish.chunk=6000"});
  EXPECT_FALSE(SoftFinish::check(rig.config.host, rig.device->info()).ok());
}

TEST(Schedulers, EveryNameInTheTableIsMadeAndNamesItself) {
  ASSERT_FALSE(schedulers().empty());
  for (const SchedulerEntry& entry : schedulers()) {
    Rig rig(std::string(entry.name));
    auto made = make_scheduler(rig.config.host, rig.device->info());
    ASSERT_TRUE(made.ok()) << entry.name;
    EXPECT_EQ((*made)->name(), entry.name);
  }
  Config config = *preset_config("small");
  config.host.scheduler = "bfq";
  Simulator sim;
  auto device = std::move(make_zns_device(config, sim)).value();
  auto refused = make_scheduler(config.host, device->info());
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error(), "host.scheduler 'bfq' is not one of none, mq-deadline, zinc");
  EXPECT_FALSE(known_scheduler("bfq"));
  EXPECT_EQ(scheduler_list(" or "), "none, mq-deadline or zinc");
}

}  // namespace
}  // namespace zonelab
