// Tenants (seed 001 §IV-D): several programs on one file system, each
// confined to its own zone sets -- and, on a format that binds the sets to
// dies, to its own dies. A tenant's files are those under /NAME.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "controller/modeled_device.h"
#include "fs/fs_test_util.h"

namespace zonelab::fs {
namespace {

// 8 dies of 64 KiB chunks: 16 zones of 128 KiB (two dies each) on dies
// 0-3, then 8 of 256 KiB (four dies) on dies 4-7, and a third set of
// 128 KiB zones on every die.
Config tenant_config(const std::string& format = "128KiB:16@0-3,256KiB:8@4-7,128KiB:8") {
  return fs_test_config(
      {"flash.dies_per_channel=4", "flash.blocks_per_plane=16", "zns.format=" + format});
}

MkfsOptions with_tenants(std::vector<std::string> tenants) {
  MkfsOptions o = test_mkfs_options();
  o.tenants = std::move(tenants);
  return o;
}

// Zone z's set on tenant_config(): 0-15 set 0, 16-23 set 1, 24-31 set 2.
uint32_t set_of(uint32_t zone) { return zone < 16 ? 0 : zone < 24 ? 1 : 2; }

// The sets holding each file's extents, from the file system's dump.
std::map<std::string, std::set<uint32_t>> sets_by_file(const ZonedFs& fs) {
  std::map<std::string, std::set<uint32_t>> out;
  auto dump = nlohmann::json::parse(fs.dump_json());
  for (const auto& f : dump["files"]) {
    for (const auto& name : f["names"]) {
      auto& sets = out[name.get<std::string>()];
      for (const auto& e : f["extents"]) sets.insert(set_of(e["zone"].get<uint32_t>()));
    }
  }
  return out;
}

TEST(Tenants, EachTenantsFilesStayInItsSetsThroughCollectionAndRemount) {
  TestImage image(tenant_config());
  MkfsOptions mkfs = with_tenants({"a=0", "b=1"});
  mkfs.gc_free_pct = 30;
  MountOptions mount_options;
  mount_options.gc = true;
  std::map<std::string, std::vector<uint8_t>> live;
  {
    Mounted m = fresh(image, mkfs, mount_options);
    ASSERT_NE(m.fs, nullptr);
    ASSERT_EQ(m.fs->superblock().tenants.size(), 2u);
    EXPECT_EQ(m.fs->superblock().tenants[0], (SuperTenant{"a", 1u}));
    EXPECT_EQ(m.fs->superblock().tenants[1], (SuperTenant{"b", 2u}));
    // mkfs made each tenant's directory.
    EXPECT_TRUE(m.fs->stat("/a").ok());
    EXPECT_TRUE(m.fs->stat("/b").ok());
    ASSERT_TRUE(m.fs->create_dir("/a/db", false).is_ok());
    ASSERT_TRUE(m.fs->create_dir("/b/db", false).is_ok());
    // Write and delete in turns, more than either tenant's zones hold at
    // once, so both collect garbage; every level, hot and cold.
    uint64_t seed = 1;
    for (int round = 0; round < 80; ++round) {
      const std::string tenant = round % 3 == 0 ? "/b" : "/a";
      const std::string path = tenant + "/db/f" + std::to_string(round);
      live[path] = pattern_bytes(seed++, 40'000 + (round % 5) * 30'000);
      const ZonedFs::WriteOptions hot{Lifetime::kMedium, IoClass::kFlush, false};
      const ZonedFs::WriteOptions cold{Lifetime::kLong, IoClass::kCompaction, false};
      write_file(*m.fs, path, live[path], round % 2 == 0 ? hot : cold);
      if (live.size() > 10) {
        auto it = live.begin();
        std::advance(it, round % live.size());
        ASSERT_TRUE(m.fs->remove(it->first).is_ok());
        live.erase(it);
      }
    }
    // A file outside every tenant goes to the set no tenant has.
    live["/loose"] = pattern_bytes(99, 50'000);
    write_file(*m.fs, "/loose", live["/loose"]);
    FsCounters c = m.fs->counters();
    EXPECT_GT(c.gc_runs, 0u);
    for (const auto& [path, sets] : sets_by_file(*m.fs)) {
      const std::set<uint32_t> want{path.rfind("/a/", 0) == 0   ? 0u
                                    : path.rfind("/b/", 0) == 0 ? 1u
                                                                : 2u};
      EXPECT_EQ(sets, want) << path;
    }
    // Per-tenant space and writes: the sets' added up.
    const FsSpace space = m.fs->space();
    ASSERT_EQ(space.tenants.size(), 2u);
    EXPECT_EQ(space.tenants[0].name, "a");
    EXPECT_EQ(space.tenants[0].space.used_bytes, space.sets[0].used_bytes);
    EXPECT_EQ(space.tenants[1].space.data_zones, space.sets[1].data_zones);
    EXPECT_EQ(space.tenants[1].space.written_bytes, space.sets[1].written_bytes);
    EXPECT_GT(space.tenants[0].space.data_written_bytes, 0u);
    EXPECT_GT(space.tenants[1].space.data_written_bytes, 0u);
    uint64_t files_a = 0;
    for (const auto& [path, data] : live) files_a += path.rfind("/a/", 0) == 0 ? 1 : 0;
    EXPECT_EQ(space.tenants[0].files, files_a);
    auto stats = nlohmann::json::parse(m.fs->stats_json());
    ASSERT_EQ(stats["space"]["tenants"].size(), 2u);
    EXPECT_EQ(stats["space"]["tenants"][1]["tenant"], "b");
    EXPECT_EQ(stats["space"]["tenants"][1]["sets"], nlohmann::json::array({1}));
    EXPECT_TRUE(m.fs->fsck(false).clean());
    EXPECT_TRUE(m.fs->unmount().is_ok());
  }
  Mounted again = mount(image);
  ASSERT_NE(again.fs, nullptr);
  EXPECT_EQ(again.fs->superblock().tenants.size(), 2u);
  for (const auto& [path, data] : live) EXPECT_EQ(read_file(*again.fs, path), data) << path;
  ZonedFs::FsckReport report = again.fs->fsck(false);
  EXPECT_TRUE(report.clean()) << report.problems.front();
}

TEST(Tenants, NoNameCarriesAFileOutOfItsTenant) {
  TestImage image(tenant_config("128KiB:16@0-3,256KiB:8@4-7"));
  Mounted m = fresh(image, with_tenants({"a=0", "b=1"}));
  ASSERT_NE(m.fs, nullptr);
  write_file(*m.fs, "/a/x", pattern_bytes(1, 10'000));
  // Every set is a tenant's: a file in no tenant's directory has no room.
  auto loose = m.fs->open_write("/x", {});
  ASSERT_FALSE(loose.ok());
  EXPECT_EQ(loose.status().code(), Code::kInvalid);
  EXPECT_NE(loose.status().message().find("no tenant's directory"), std::string::npos)
      << loose.status().message();
  EXPECT_EQ(m.fs->rename("/a/x", "/b/x").code(), Code::kInvalid);
  EXPECT_EQ(m.fs->link("/a/x", "/b/y").code(), Code::kInvalid);
  EXPECT_EQ(m.fs->rename("/a", "/c").code(), Code::kInvalid);
  EXPECT_EQ(m.fs->remove_dir("/b").code(), Code::kInvalid);
  // Within a tenant, names move freely.
  EXPECT_TRUE(m.fs->rename("/a/x", "/a/y").is_ok());
  EXPECT_TRUE(m.fs->link("/a/y", "/a/z").is_ok());
  EXPECT_EQ(read_file(*m.fs, "/a/z"), pattern_bytes(1, 10'000));
  EXPECT_TRUE(m.fs->fsck(false).clean());
}

TEST(Tenants, AFullTenantSaysItsSetsAreFullAndTheOtherStillWrites) {
  TestImage image(tenant_config("128KiB:16@0-3,256KiB:8@4-7"));
  MountOptions gc_off;
  gc_off.gc = false;
  Mounted m = fresh(image, with_tenants({"a=0", "b=1"}), gc_off);
  ASSERT_NE(m.fs, nullptr);
  // Tenant a's 14 data zones of 128 KiB hold less than 2 MiB.
  FsStatus last;
  for (int i = 0; i < 40 && last.is_ok(); ++i) {
    auto file = m.fs->open_write("/a/f" + std::to_string(i), {});
    ASSERT_TRUE(file.ok());
    std::vector<uint8_t> data = pattern_bytes(i, 100'000);
    last = (*file)->append(data.data(), data.size());
    if (last.is_ok())
      last = (*file)->close();
    else
      (void)(*file)->close();
  }
  EXPECT_EQ(last.code(), Code::kNoSpace);
  EXPECT_NE(last.message().find("no space left in tenant a's zone sets (0): 14 of 14 data zones"),
            std::string::npos)
      << last.message();
  // Tenant b's sets are untouched and take its writes.
  write_file(*m.fs, "/b/x", pattern_bytes(7, 300'000));
  EXPECT_EQ(read_file(*m.fs, "/b/x"), pattern_bytes(7, 300'000));
}

TEST(Tenants, MkfsRefusesTenantsThatCannotBeAndChangesNothing) {
  TestImage image(tenant_config());
  {
    Mounted m = fresh(image);
    ASSERT_NE(m.fs, nullptr);
    write_file(*m.fs, "/keep", pattern_bytes(5, 30'000));
    EXPECT_TRUE(m.fs->unmount().is_ok());
  }
  auto refused = [&](std::vector<std::string> tenants) {
    std::unique_ptr<Stack> stack = image.open();
    MkfsOptions o = with_tenants(std::move(tenants));
    o.force = true;
    FsStatus made = ZonedFs::mkfs(*stack, o);
    EXPECT_EQ(made.code(), Code::kInvalid);
    return made.message();
  };
  EXPECT_NE(refused({"a=0", "b=0"}).find("zone set 0 is tenant a's"), std::string::npos);
  EXPECT_NE(refused({"a=0", "b=7"}).find("no zone set '7' (the device has sets 0-2)"),
            std::string::npos);
  EXPECT_NE(refused({"a=0", "a=1"}).find("named twice"), std::string::npos);
  EXPECT_NE(refused({"a/b=0"}).find("only letters"), std::string::npos);
  EXPECT_NE(refused({"a"}).find("NAME=SETS"), std::string::npos);
  EXPECT_NE(refused({"a="}).find("no zone sets"), std::string::npos);
  EXPECT_NE(refused({"a=1,x"}).find("no zone set 'x'"), std::string::npos);
  EXPECT_NE(refused({"a=0,0"}).find("named twice"), std::string::npos);
  EXPECT_NE(refused({"toolongtenantname17=0"}).find("at most 16"), std::string::npos);
  // Nothing changed: the file system and its file are still there.
  Mounted m = mount(image);
  ASSERT_NE(m.fs, nullptr);
  EXPECT_TRUE(m.fs->superblock().tenants.empty());
  EXPECT_EQ(read_file(*m.fs, "/keep"), pattern_bytes(5, 30'000));

  // A namespace of one zone size has no sets to give.
  TestImage uniform;
  std::unique_ptr<Stack> stack = uniform.open();
  FsStatus made = ZonedFs::mkfs(*stack, with_tenants({"a=0"}));
  EXPECT_EQ(made.code(), Code::kInvalid);
  EXPECT_NE(made.message().find("tenants need zone sets"), std::string::npos) << made.message();
}

TEST(Tenants, TheSuperblockRecordsTenantsAndRefusesBadOnes) {
  Superblock sb;
  sb.block_bytes = 4096;
  sb.zone_size_lbas = 32;
  sb.zone_capacity_lbas = 32;
  sb.zone_count = 32;
  sb.meta_zones = 2;
  sb.policy = "zenfs";
  sb.zone_sets = {{32, 32, 16}, {64, 64, 8}, {32, 32, 8}};
  // Without tenants, a version-2 superblock is what it was before tenants.
  std::vector<uint8_t> plain = encode_superblock(sb);
  EXPECT_EQ(plain.size(), 128u + 3 * 20 + 4);
  sb.tenants = {{"a", 1}, {"tenant-b.2", 6}};
  std::vector<uint8_t> bytes = encode_superblock(sb);
  ASSERT_EQ(bytes.size(), superblock_bytes(sb));
  EXPECT_EQ(bytes.size(), 128u + 3 * 20 + 2 * 20 + 4);
  auto back = decode_superblock(bytes.data(), bytes.size());
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, sb);
  auto broken = [&](const std::function<void(Superblock&)>& change) {
    Superblock bad = sb;
    change(bad);
    std::vector<uint8_t> b = encode_superblock(bad);
    return decode_superblock(b.data(), b.size()).status();
  };
  EXPECT_EQ(broken([](Superblock& b) { b.tenants[1].sets = 3; }).code(), Code::kCorruption);
  EXPECT_EQ(broken([](Superblock& b) { b.tenants[1].sets = 8; }).code(), Code::kCorruption);
  EXPECT_EQ(broken([](Superblock& b) { b.tenants[1].sets = 0; }).code(), Code::kCorruption);
  EXPECT_EQ(broken([](Superblock& b) { b.tenants[1].name = "a"; }).code(), Code::kCorruption);
  EXPECT_EQ(broken([](Superblock& b) { b.tenants[1].name = ".."; }).code(), Code::kCorruption);
  // Every byte of the tenants is under the checksum.
  for (size_t at = 128 + 3 * 20; at < bytes.size(); at += 7) {
    std::vector<uint8_t> flipped = bytes;
    flipped[at] ^= 0x04;
    EXPECT_EQ(decode_superblock(flipped.data(), flipped.size()).status().code(), Code::kCorruption)
        << "byte " << at;
  }
  // A metadata header carries the tenants and decodes whole.
  std::vector<uint8_t> header = encode_meta_header(3, 9, sb, {}, 4096);
  uint64_t needed = 0;
  auto meta = decode_meta_header(header.data(), header.size(), 4096, &needed);
  ASSERT_TRUE(meta.ok()) << meta.status().message();
  EXPECT_EQ(meta->superblock, sb);
}

TEST(Tenants, SetsBoundToDiesKeepEachTenantsFlashOnItsDies) {
  // The device's side: every FBG a tenant's zone takes lies on its set's
  // dies, whichever the allocator picks.
  TestImage image(tenant_config("128KiB:16@0-3,256KiB:8@4-7"));
  Mounted m = fresh(image, with_tenants({"a=0", "b=1"}));
  ASSERT_NE(m.fs, nullptr);
  for (int i = 0; i < 12; ++i) {
    write_file(*m.fs, (i % 2 == 0 ? "/a/f" : "/b/f") + std::to_string(i),
               pattern_bytes(i, 100'000));
  }
  nlohmann::ordered_json info;
  std::vector<nlohmann::ordered_json> zones(24);
  m.stack->inspect([&](const ModeledDevice& device) {
    device.describe_state(info);
    for (uint32_t z = 0; z < zones.size(); ++z) device.describe_zone(z, zones[z]);
  });
  const auto& sets = info["flexzns"]["zone_sets"];
  ASSERT_EQ(sets.size(), 2u);
  EXPECT_EQ(sets[0]["dies"], "0-3");
  EXPECT_EQ(sets[1]["dies"], "4-7");
  EXPECT_TRUE(sets[0]["dies_bound"].get<bool>());
  uint32_t mapped = 0;
  for (uint32_t z = 0; z < zones.size(); ++z) {
    if (!zones[z].contains("fbg")) continue;
    ++mapped;
    const uint32_t first = zones[z]["fbg"]["first_die"].get<uint32_t>();
    const uint32_t dies = zones[z]["fbg"]["dies"].get<uint32_t>();
    if (z < 16) {
      EXPECT_LE(first + dies, 4u) << "zone " << z;
    } else {
      EXPECT_GE(first, 4u) << "zone " << z;
    }
  }
  EXPECT_GT(mapped, 6u);
  EXPECT_TRUE(m.fs->fsck(false).clean());
}

}  // namespace
}  // namespace zonelab::fs
