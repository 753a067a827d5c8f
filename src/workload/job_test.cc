// Job options and TOML job files.
#include "workload/job.h"

#include <gtest/gtest.h>

namespace zonelab {
namespace {

TEST(Job, OptionsParseUnits) {
  JobSpec j;
  EXPECT_TRUE(set_job_option(j, "bs", "16KiB").ok());
  EXPECT_EQ(j.block_size_bytes, 16384u);
  EXPECT_TRUE(set_job_option(j, "size", "400%").ok());
  EXPECT_EQ(j.size_percent, 400.0);
  EXPECT_TRUE(set_job_option(j, "size", "1GiB").ok());
  EXPECT_EQ(j.size_bytes, 1ULL << 30);
  EXPECT_EQ(j.size_percent, 0.0);
  EXPECT_TRUE(set_job_option(j, "runtime", "2s").ok());
  EXPECT_EQ(j.runtime_ns, 2'000'000'000u);
  EXPECT_TRUE(set_job_option(j, "rate", "100MiB/s").ok());
  EXPECT_EQ(j.rate_bytes_per_s, 100u << 20);
  EXPECT_TRUE(set_job_option(j, "zones", "3-9").ok());
  EXPECT_EQ(j.zones->first, 3u);
  EXPECT_EQ(j.zones->second, 9u);
}

TEST(Job, BadOptionsAreErrors) {
  JobSpec j;
  EXPECT_FALSE(set_job_option(j, "rw", "randwrite").ok());
  EXPECT_FALSE(set_job_option(j, "iodepth", "0").ok());
  EXPECT_FALSE(set_job_option(j, "zones", "9-3").ok());
  EXPECT_FALSE(set_job_option(j, "size", "0%").ok());
  EXPECT_FALSE(set_job_option(j, "bs", "huge").ok());
  EXPECT_FALSE(set_job_option(j, "colour", "blue").ok());
}

TEST(Job, FileKeepsJobOrderAndAppliesGlobal) {
  auto jobs = parse_job_file_text(
      "[global]\nbs = \"8KiB\"\n[zeta]\nrw = \"write\"\n[alpha]\nrw = \"randread\"\n"
      "stonewall = true\niodepth = 4\n",
      "t.toml");
  ASSERT_TRUE(jobs.ok()) << jobs.error();
  ASSERT_EQ(jobs->size(), 2u);
  EXPECT_EQ((*jobs)[0].name, "zeta");
  EXPECT_EQ((*jobs)[1].name, "alpha");
  EXPECT_EQ((*jobs)[1].block_size_bytes, 8192u);
  EXPECT_TRUE((*jobs)[1].stonewall);
  EXPECT_EQ((*jobs)[1].iodepth, 4u);
}

TEST(Job, MalformedFilesAreErrors) {
  EXPECT_FALSE(parse_job_file_text("[a\n", "t").ok());
  EXPECT_FALSE(parse_job_file_text("", "t").ok());
  EXPECT_FALSE(parse_job_file_text("x = 1\n", "t").ok());
  EXPECT_FALSE(parse_job_file_text("[a]\nrw = 3.5\n", "t").ok());
  auto err = parse_job_file_text("[a]\nbogus = 1\n", "t.toml");
  ASSERT_FALSE(err.ok());
  EXPECT_NE(err.error().find("bogus"), std::string::npos);
}

}  // namespace
}  // namespace zonelab
