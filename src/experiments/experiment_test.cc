// The experiment registry: names are unique and findable, every experiment
// has what the report and the plotting tool need; the emulator front end
// puts back the emulators' flash.
#include "experiments/experiment.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "experiments/front_end.h"

namespace zonelab {
namespace {

TEST(ExperimentRegistry, ListsConfznsppWithItsExperiments) {
  const ExperimentSet* set = find_experiment_set("confznspp");
  ASSERT_NE(set, nullptr);
  EXPECT_NE(find_experiment(*set, "finish_occupancy"), nullptr);
  EXPECT_NE(find_experiment(*set, "reset_occupancy"), nullptr);
  EXPECT_EQ(find_experiment(*set, "nope"), nullptr);
}

TEST(ExperimentRegistry, ListsZn540WithItsMembers) {
  const ExperimentSet* set = find_experiment_set("zn540");
  ASSERT_NE(set, nullptr);
  for (const char* name : {"fig2", "fig3", "fig4", "fig7", "fig8", "observations", "calibration"}) {
    EXPECT_NE(find_experiment(*set, name), nullptr) << name;
  }
  EXPECT_EQ(set->experiments.size(), 7u);
}

TEST(ExperimentRegistry, ListsRocksdbZenfsplusAsARealTimeSet) {
  const ExperimentSet* set = find_experiment_set("rocksdb-zenfsplus");
  ASSERT_NE(set, nullptr);
  for (const char* name : {"fig3", "fig3b", "fig8", "table1", "fig10", "fig9", "fig11", "fig13",
                           "table3", "largezone", "host"}) {
    EXPECT_NE(find_experiment(*set, name), nullptr) << name;
  }
  EXPECT_EQ(set->experiments.size(), 11u);
  EXPECT_FALSE(set->deterministic);  // RocksDB on the wall clock
}

TEST(EmulatorFrontEnd, PutsBackTheEmulatorFlashWhateverTheDrivePresetProgramsInOneGo) {
  // zn540 programs a die's 96 KiB one-shot unit as its page; the
  // experiments that compare with the emulators (block-tax,
  // rocksdb-zns-vs-block) keep running 64 planes of 16 KiB pages.
  auto drive = preset_with("zn540", {});
  ASSERT_TRUE(drive.ok());
  EXPECT_EQ(drive->flash.planes_per_die, 1u);
  EXPECT_EQ(drive->flash.page_size_bytes, 96u * 1024);
  auto emulator = preset_with("zn540", emulator_front_end());
  ASSERT_TRUE(emulator.ok()) << emulator.error();
  EXPECT_EQ(
      emulator->flash.channels * emulator->flash.dies_per_channel * emulator->flash.planes_per_die,
      64u);
  EXPECT_EQ(emulator->flash.page_size_bytes, 16u * 1024);
  EXPECT_EQ(emulator->flash.transfer_latency_ns, 13653u);
  EXPECT_EQ(emulator->flash.program_latency_ns, 700000u);
  EXPECT_EQ(emulator->buffer.size_bytes, 0u);
  EXPECT_EQ(drive->controller.read_dispatch, "die");
  EXPECT_EQ(emulator->controller.read_dispatch, "arrival");
}

TEST(ExperimentRegistry, UnknownNamesAreNotFound) {
  EXPECT_EQ(find_experiment_set(""), nullptr);
  EXPECT_EQ(find_experiment_set("ConfZNSpp"), nullptr);
  EXPECT_NE(experiment_set_names().find("confznspp"), std::string::npos);
}

TEST(ExperimentRegistry, NamesAreUniqueFileNamesAndEveryEntryIsComplete) {
  std::set<std::string_view> sets;
  for (const ExperimentSet& set : experiment_sets()) {
    EXPECT_TRUE(sets.insert(set.name).second) << set.name;
    EXPECT_FALSE(set.title.empty());
    EXPECT_FALSE(set.experiments.empty());
    std::set<std::string_view> names;
    for (const Experiment& e : set.experiments) {
      EXPECT_TRUE(names.insert(e.name).second) << e.name;
      EXPECT_EQ(e.name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_"),
                std::string_view::npos)
          << e.name;
      EXPECT_NE(e.name, "README");
      EXPECT_FALSE(e.title.empty());
      EXPECT_FALSE(e.source.empty());
      EXPECT_FALSE(e.description.empty());
      EXPECT_NE(e.run, nullptr);
    }
  }
}

}  // namespace
}  // namespace zonelab
