// Job options and TOML job files.
#include "workload/job.h"

#include <gtest/gtest.h>

#include <string>

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
  EXPECT_FALSE(set_job_option(j, "rw", "randomwrite").ok());
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

// --- fio's habits --------------------------------------------------------

TEST(Job, SizesReadAsFioReadsThemWithPowersOf1024) {
  for (const char* text : {"4k", "4K", "4KB", "4kb", "4KiB", "4kib", "4096"}) {
    JobSpec j;
    ASSERT_TRUE(set_job_option(j, "bs", text).ok()) << text;
    EXPECT_EQ(j.block_size_bytes, 4096u) << text;
  }
  JobSpec j;
  ASSERT_TRUE(set_job_option(j, "size", "1g").ok());
  EXPECT_EQ(j.size_bytes, 1ULL << 30);
  ASSERT_TRUE(set_job_option(j, "rate", "100m").ok());
  EXPECT_EQ(j.rate_bytes_per_s, 100u << 20);
  ASSERT_TRUE(set_job_option(j, "rate", "1MB/s").ok());
  EXPECT_EQ(j.rate_bytes_per_s, 1u << 20);
}

TEST(Job, KbBase1000MakesKAThousandButLeavesKiBAlone) {
  JobSpec j;
  JobOptionList options{{"bs", "8k"}, {"size", "1MiB"}, {"rate", "2MB/s"}, {"kb_base", "1000"}};
  ASSERT_TRUE(set_job_options(j, options).ok());  // kb_base first, wherever it is written
  EXPECT_EQ(j.block_size_bytes, 8000u);
  EXPECT_EQ(j.size_bytes, 1u << 20);
  EXPECT_EQ(j.rate_bytes_per_s, 2'000'000u);
  EXPECT_FALSE(set_job_option(j, "kb_base", "1023").ok());
}

TEST(Job, ABareRuntimeIsSecondsAndUnitsAreFios) {
  JobSpec j;
  ASSERT_TRUE(set_job_option(j, "runtime", "30").ok());
  EXPECT_EQ(j.runtime_ns, 30'000'000'000u);
  ASSERT_TRUE(set_job_option(j, "runtime", "2m").ok());
  EXPECT_EQ(j.runtime_ns, 120'000'000'000u);
  ASSERT_TRUE(set_job_option(j, "runtime", "1h").ok());
  EXPECT_EQ(j.runtime_ns, kJobRuntimeMaxNs);
  ASSERT_TRUE(set_job_option(j, "runtime", "250ms").ok());
  EXPECT_EQ(j.runtime_ns, 250'000'000u);
  ASSERT_TRUE(set_job_option(j, "log_avg_msec", "500").ok());
  EXPECT_EQ(j.log_interval_ns, 500'000'000u);
}

TEST(Job, RuntimesAndLogIntervalsHaveALimitNamedInTheError) {
  JobSpec j;
  auto too_long = set_job_option(j, "runtime", "3601");
  ASSERT_FALSE(too_long.ok());
  EXPECT_NE(too_long.error().find("3600s"), std::string::npos) << too_long.error();
  EXPECT_FALSE(set_job_option(j, "runtime", "0").ok());
  EXPECT_FALSE(set_job_option(j, "runtime", "2d").ok());
  EXPECT_FALSE(set_job_option(j, "log_interval", "100ns").ok());
}

TEST(Job, TheNewKindsAndTheirMix) {
  JobSpec j;
  for (const char* kind : {"randwrite", "randrw", "trim", "read", "randread", "write", "append"}) {
    ASSERT_TRUE(set_job_option(j, "rw", kind).ok()) << kind;
    EXPECT_EQ(job_kind_name(j.kind), kind);
  }
  EXPECT_EQ(j.rwmixread_percent, 50u);  // fio's default
  ASSERT_TRUE(set_job_option(j, "rwmixwrite", "30").ok());
  EXPECT_EQ(j.rwmixread_percent, 70u);
  EXPECT_FALSE(set_job_option(j, "rwmixread", "101").ok());
  EXPECT_FALSE(set_job_option(j, "rw", "finish").ok());  // programs' kinds stay theirs
  EXPECT_TRUE(needs_block_interface(JobKind::kTrim));
  EXPECT_FALSE(needs_block_interface(JobKind::kWrite));
}

TEST(Job, OffsetsAreBytesOrPercentages) {
  JobSpec j;
  ASSERT_TRUE(set_job_option(j, "offset", "128M").ok());
  EXPECT_EQ(j.offset_bytes, 128u << 20);
  ASSERT_TRUE(set_job_option(j, "offset", "25%").ok());
  EXPECT_EQ(j.offset_percent, 25.0);
  EXPECT_EQ(j.offset_bytes, 0u);
  EXPECT_FALSE(set_job_option(j, "offset", "100%").ok());
}

TEST(Job, OptionsTakeDashesUnderscoresAndFiosOtherNames) {
  JobSpec j;
  ASSERT_TRUE(set_job_option(j, "zone-order", "random").ok());
  EXPECT_TRUE(j.random_zones);
  ASSERT_TRUE(set_job_option(j, "blocksize", "8k").ok());
  EXPECT_EQ(j.block_size_bytes, 8192u);
  ASSERT_TRUE(set_job_option(j, "readwrite", "write").ok());
  EXPECT_EQ(j.kind, JobKind::kWrite);
  ASSERT_TRUE(set_job_option(j, "rate-iops", "2.5").ok());
  EXPECT_EQ(j.rate_iops, 2.5);
  ASSERT_TRUE(set_job_option(j, "time_based", "1").ok());
  EXPECT_TRUE(j.time_based);
  EXPECT_EQ(canonical_job_option("log-avg-msec"), "log_avg_msec");
  EXPECT_EQ(canonical_job_option("ioengine"), "");
  for (const JobOptionInfo& option : job_options()) {
    EXPECT_EQ(canonical_job_option(option.name), option.name);
    EXPECT_EQ(option.name.find('-'), std::string_view::npos) << option.name;
    EXPECT_FALSE(option.help.empty()) << option.name;
  }
}

TEST(Job, BadNumbersAreNamedAsWrittenOnOneLine) {
  struct Row {
    const char* key;
    std::string value;
    const char* named;
  };
  const Row rows[] = {
      {"iodepth", "-1", "'-1'"},
      {"iodepth", "", "''"},
      {"numjobs", "18446744073709551616", "'18446744073709551616'"},
      {"bs", "99999999999999999999k", "'99999999999999999999k'"},
      {"size", "-4k", "'-4k'"},
      {"size", "16EiB", "'16EiB'"},
      {"runtime", "1\n2", "'1\\x0a2'"},
      {"zones", std::string("3\n-x"), "'3\\x0a-x'"},
      {"name", std::string("a\nb"), "'a\\x0ab'"},
      {"name", std::string(65, 'x'), "64"},
      {"randseed", "-5", "'-5'"},
  };
  for (const Row& row : rows) {
    JobSpec j;
    auto set = set_job_option(j, row.key, row.value);
    ASSERT_FALSE(set.ok()) << row.key << " = " << row.value;
    EXPECT_EQ(set.error().find('\n'), std::string::npos) << set.error();
    EXPECT_EQ(set.error().rfind(row.key, 0), 0u) << set.error();
    EXPECT_NE(set.error().find(row.named), std::string::npos) << set.error();
  }
}

TEST(Job, FilesTakeFioSpellingsAndKbBaseFromGlobal) {
  auto jobs = parse_job_file_text(
      "[global]\nkb_base = 1000\n[a]\nreadwrite = \"write\"\nblocksize = \"8k\"\n"
      "zone-order = \"random\"\nruntime = 2\nrate_iops = 2.5\nstonewall = 1\n",
      "t.toml");
  ASSERT_TRUE(jobs.ok()) << jobs.error();
  const JobSpec& a = (*jobs)[0];
  EXPECT_EQ(a.block_size_bytes, 8000u);
  EXPECT_TRUE(a.random_zones);
  EXPECT_EQ(a.runtime_ns, 2'000'000'000u);
  EXPECT_EQ(a.rate_iops, 2.5);
  EXPECT_TRUE(a.stonewall);
}

TEST(Job, FileErrorsNameTheFileAndJobOnOneLine) {
  auto bad_name = parse_job_file_text("[\"a\\nb\"]\nrw = \"write\"\n", "dir\n/t.toml");
  ASSERT_FALSE(bad_name.ok());
  EXPECT_EQ(bad_name.error().find('\n'), std::string::npos) << bad_name.error();
  EXPECT_NE(bad_name.error().find("dir\\x0a/t.toml"), std::string::npos) << bad_name.error();
  auto negative = parse_job_file_text("[a]\niodepth = -3\n", "t.toml");
  ASSERT_FALSE(negative.ok());
  EXPECT_NE(negative.error().find("t.toml: [a] iodepth: number '-3'"), std::string::npos)
      << negative.error();
  auto nested = parse_job_file_text("[a]\nbs = { x = 1 }\n", "t.toml");
  EXPECT_FALSE(nested.ok());
  std::string many;
  for (int i = 0; i <= 256; ++i) many += "[j" + std::to_string(i) + "]\n";
  auto too_many = parse_job_file_text(many, "t.toml");
  ASSERT_FALSE(too_many.ok());
  EXPECT_NE(too_many.error().find("256"), std::string::npos) << too_many.error();
}

TEST(Job, DeeplyNestedJobFilesAreRefusedBeforeTheyAreParsed) {
  std::string deep = "[" + std::string(100'000, 'a') + "]\n";
  for (int i = 0; i < 100'000; ++i) deep += i == 0 ? "a" : ".a";
  deep += " = 1\n";
  auto jobs = parse_job_file_text(deep, "deep.toml");
  ASSERT_FALSE(jobs.ok());
  EXPECT_NE(jobs.error().find("limit of 32 levels"), std::string::npos) << jobs.error();
}

}  // namespace
}  // namespace zonelab
