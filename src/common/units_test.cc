// Sizes, times and rates as users write them: binary prefixes are powers of
// 1024, decimal ones powers of 1000, a plain number is the base unit, and
// anything that is not a whole number of the base unit is refused.
#include "common/units.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace zonelab {
namespace {

struct Parsed {
  const char* text;
  uint64_t value;
};

constexpr uint64_t kKi = 1024;
constexpr uint64_t kMi = kKi * kKi;
constexpr uint64_t kGi = kMi * kKi;

TEST(Units, Sizes) {
  // clang-format off
  const Parsed rows[] = {
      {"4096",     4096},
      {"4096B",    4096},
      {"16KiB",    16 * kKi},
      {"16K",      16 * kKi},
      {"1056MiB",  1056 * kMi},
      {"2GiB",     2 * kGi},
      {"1TiB",     kGi * kKi},
      {"72MB",     72'000'000},
      {"4KB",      4000},
      {"1.5KiB",   1536},
      {"0.5MiB",   512 * kKi},
      {"3940MB",   3'940'000'000},
      {"0",        0},
  };
  // clang-format on
  for (const Parsed& row : rows) {
    auto value = parse_size_bytes(row.text);
    ASSERT_TRUE(value.ok()) << row.text << ": " << value.error();
    EXPECT_EQ(*value, row.value) << row.text;
  }
}

TEST(Units, Times) {
  // clang-format off
  const Parsed rows[] = {
      {"450us",    450'000},
      {"3.5ms",    3'500'000},
      {"25000ns",  25'000},
      {"25000",    25'000},
      {"13653ns",  13'653},
      {"2s",       2'000'000'000},
      {"0.5s",     500'000'000},
      {"1.25us",   1'250},
      {"5ms",      5'000'000},
      {"0ns",      0},
  };
  // clang-format on
  for (const Parsed& row : rows) {
    auto value = parse_time_ns(row.text);
    ASSERT_TRUE(value.ok()) << row.text << ": " << value.error();
    EXPECT_EQ(*value, row.value) << row.text;
  }
}

TEST(Units, PercentagesAreHundredthsOfAPercent) {
  // clang-format off
  const Parsed rows[] = {
      {"7%", 700}, {"28%", 2800}, {"28", 2800}, {"6.25%", 625}, {"0.5%", 50}, {" 12 % ", 1200},
  };
  // clang-format on
  for (const Parsed& row : rows) {
    auto value = parse_percent_basis_points(row.text);
    ASSERT_TRUE(value.ok()) << row.text << ": " << value.error();
    EXPECT_EQ(*value, row.value) << row.text;
    EXPECT_EQ(*parse_percent_basis_points(format_percent_basis_points(*value)), *value);
  }
  EXPECT_EQ(format_percent_basis_points(700), "7%");
  EXPECT_EQ(format_percent_basis_points(650), "6.5%");
  EXPECT_EQ(format_percent_basis_points(625), "6.25%");
  for (const char* bad : {"", "%", "7%%", "7 percent", "1.234%", "-3%", "99999999%"}) {
    EXPECT_FALSE(parse_percent_basis_points(bad).ok()) << bad;
  }
}

TEST(Units, Rates) {
  // clang-format off
  const Parsed rows[] = {
      {"1.2GB/s",   1'200'000'000},
      {"100MiB/s",  100 * kMi},
      {"4GB/s",     4'000'000'000},
      {"3940MB/s",  3'940'000'000},
      {"512KiB/s",  512 * kKi},
      {"1000B/s",   1000},
      {"1000",      1000},
  };
  // clang-format on
  for (const Parsed& row : rows) {
    auto value = parse_rate_bytes_per_s(row.text);
    ASSERT_TRUE(value.ok()) << row.text << ": " << value.error();
    EXPECT_EQ(*value, row.value) << row.text;
  }
}

TEST(Units, Counts) {
  EXPECT_EQ(*parse_count("0"), 0u);
  EXPECT_EQ(*parse_count("14"), 14u);
  EXPECT_EQ(*parse_count("29172"), 29172u);
  for (const char* bad : {"", "x", "1.5", "-3", "12KiB", "1e3", "0x10", "14 zones"}) {
    EXPECT_FALSE(parse_count(bad).ok()) << bad;
  }
}

TEST(Units, MalformedSizesAreRefused) {
  for (const char* bad : {"", " ", "KiB", "abc", "-1", "-1KiB", "1.5", "16XB", "16kib", "16 KiBs",
                          "1..5KiB", "1e3", "0x10", "16KiB/s", "3ms", "1.2.3", "99999999999TiB"}) {
    EXPECT_FALSE(parse_size_bytes(bad).ok()) << "'" << bad << "'";
  }
}

TEST(Units, MalformedTimesAreRefused) {
  for (const char* bad :
       {"", "us", "fast", "-5us", "1.5ns", "0.1ns", "10min", "3.5 m", "450uss", "1h", "16KiB"}) {
    EXPECT_FALSE(parse_time_ns(bad).ok()) << "'" << bad << "'";
  }
}

TEST(Units, MalformedRatesAreRefused) {
  for (const char* bad : {"", "fast", "/s", "1.2GB/m", "-1GB/s", "1.2Gb/s", "100MiB/h", "0.5B/s"}) {
    EXPECT_FALSE(parse_rate_bytes_per_s(bad).ok()) << "'" << bad << "'";
  }
}

TEST(Units, ErrorsQuoteTheInputAndGiveAnExample) {
  auto size = parse_size_bytes("16XB");
  ASSERT_FALSE(size.ok());
  EXPECT_NE(size.error().find("16XB"), std::string::npos) << size.error();
  EXPECT_NE(size.error().find("KiB"), std::string::npos) << size.error();
  auto time = parse_time_ns("fast");
  ASSERT_FALSE(time.ok());
  EXPECT_NE(time.error().find("fast"), std::string::npos) << time.error();
  auto rate = parse_rate_bytes_per_s("1.2GB/m");
  ASSERT_FALSE(rate.ok());
  EXPECT_NE(rate.error().find("1.2GB/m"), std::string::npos) << rate.error();
}

TEST(Units, AFractionOfTheBaseUnitIsRefusedNotRounded) {
  // "is not a whole number of bytes": a value that is not whole must not be
  // rounded to a neighbour, however close it is.
  for (const char* text : {"4096.001", "4096.0001KiB", "1.0000001KiB"}) {
    EXPECT_FALSE(parse_size_bytes(text).ok()) << text;
  }
  for (const char* text : {"450.0001ns", "1000000.1ns"}) {
    EXPECT_FALSE(parse_time_ns(text).ok()) << text;
  }
}

TEST(Units, FormatSizeIsTheShortestExactBinaryForm) {
  EXPECT_EQ(format_size(0), "0");
  EXPECT_EQ(format_size(4096), "4KiB");
  EXPECT_EQ(format_size(16 * kKi), "16KiB");
  EXPECT_EQ(format_size(1056 * kMi), "1056MiB");
  EXPECT_EQ(format_size(2 * kGi), "2GiB");
  EXPECT_EQ(format_size(4097), "4097");
  EXPECT_EQ(format_size(1536), "1536");
  EXPECT_EQ(format_size(72'000'000), "72000000");  // 72 MB is not a whole KiB multiple
}

TEST(Units, FormatTimePicksTheLargestExactUnit) {
  EXPECT_EQ(format_time(0), "0ns");
  EXPECT_EQ(format_time(450'000), "450us");
  EXPECT_EQ(format_time(3'500'000), "3500us");
  EXPECT_EQ(format_time(5'000'000), "5ms");
  EXPECT_EQ(format_time(2'000'000'000), "2s");
  EXPECT_EQ(format_time(13'653), "13653ns");
}

TEST(Units, FormatRate) {
  EXPECT_EQ(format_rate(100 * kMi), "100MiB/s");
  EXPECT_EQ(format_rate(3'940'000'000), "3.94GB/s");
  EXPECT_EQ(format_rate(1500), "1.5KB/s");
  EXPECT_EQ(format_rate(999), "999B/s");
}

TEST(Units, FormatRateWritesDecimalRatesAsTheyAreUsuallyWritten) {
  // units.h: "1200000000B/s" -> "1.2GB/s". 1.2e9 and 4e9 are also whole
  // multiples of 1 KiB, which must not win over the short decimal form.
  for (auto [value, text] : {std::pair<uint64_t, const char*>{1'200'000'000, "1.2GB/s"},
                             std::pair<uint64_t, const char*>{4'000'000'000, "4GB/s"}}) {
    EXPECT_EQ(format_rate(value), text);
  }
}

// Every rendering parses back to the same value.
TEST(Units, FormattedValuesParseBackExactly) {
  std::mt19937_64 rng(7);
  std::vector<uint64_t> values = {0,      1,         999,           1000,          1023,
                                  1024,   4096,      1'200'000'000, 3'940'000'000, 100 * kMi,
                                  13'653, 1ULL << 40};
  for (int i = 0; i < 2000; ++i) {
    uint64_t magnitude = rng() % 41;  // up to 1 TiB, what the keys allow
    uint64_t v = rng() % ((1ULL << magnitude) + 1);
    if (i % 3 == 0) v -= v % 1000;
    if (i % 5 == 0) v -= v % 1024;
    values.push_back(v);
  }
  for (uint64_t v : values) {
    auto size = parse_size_bytes(format_size(v));
    ASSERT_TRUE(size.ok()) << format_size(v) << ": " << size.error();
    EXPECT_EQ(*size, v) << format_size(v);
    auto time = parse_time_ns(format_time(v));
    ASSERT_TRUE(time.ok()) << format_time(v) << ": " << time.error();
    EXPECT_EQ(*time, v) << format_time(v);
    auto rate = parse_rate_bytes_per_s(format_rate(v));
    ASSERT_TRUE(rate.ok()) << format_rate(v) << ": " << rate.error();
    EXPECT_EQ(*rate, v) << format_rate(v);
  }
}

// --- Job options: fio's units ----------------------------------------------

TEST(Units, JobSizesAreFiosWithKbBase1024) {
  // clang-format off
  const Parsed rows[] = {
      {"4096",  4096},
      {"4k",    4 * kKi},
      {"4K",    4 * kKi},
      {"4KB",   4 * kKi},
      {"4kb",   4 * kKi},
      {"4KiB",  4 * kKi},
      {"4kib",  4 * kKi},
      {"1m",    kMi},
      {"1MB",   kMi},
      {"2g",    2 * kGi},
      {"1.5k",  1536},
      {"1t",    kGi * kKi},
      {"12b",   12},
  };
  // clang-format on
  for (const Parsed& row : rows) {
    auto value = parse_job_size_bytes(row.text, 1024);
    ASSERT_TRUE(value.ok()) << row.text << ": " << value.error();
    EXPECT_EQ(*value, row.value) << row.text;
  }
}

TEST(Units, JobSizesWithKbBase1000KeepIecNamesBinary) {
  // clang-format off
  const Parsed rows[] = {
      {"4k",    4000},
      {"4KB",   4000},
      {"4KiB",  4096},
      {"1M",    1'000'000},
      {"1MiB",  kMi},
      {"3g",    3'000'000'000},
  };
  // clang-format on
  for (const Parsed& row : rows) {
    auto value = parse_job_size_bytes(row.text, 1000);
    ASSERT_TRUE(value.ok()) << row.text << ": " << value.error();
    EXPECT_EQ(*value, row.value) << row.text;
  }
}

TEST(Units, ConfigurationSizesKeepTheirDecimalPrefixes) {
  // Job options follow fio; configuration keys and presets do not change.
  EXPECT_EQ(*parse_size_bytes("4KB"), 4000u);
  EXPECT_EQ(*parse_rate_bytes_per_s("3940MB/s"), 3'940'000'000u);
  EXPECT_FALSE(parse_size_bytes("4k").ok());
  EXPECT_EQ(*parse_time_ns("30"), 30u);
}

TEST(Units, JobTimesAreSecondsWhenBare) {
  // clang-format off
  const Parsed rows[] = {
      {"30",     30'000'000'000},
      {"1.5",    1'500'000'000},
      {"2s",     2'000'000'000},
      {"2sec",   2'000'000'000},
      {"500ms",  500'000'000},
      {"500msec", 500'000'000},
      {"250us",  250'000},
      {"250usec", 250'000},
      {"40ns",   40},
      {"2m",     120'000'000'000},
      {"2min",   120'000'000'000},
      {"1h",     3'600'000'000'000},
      {"1d",     86'400'000'000'000},
      {"2MS",    2'000'000},
  };
  // clang-format on
  for (const Parsed& row : rows) {
    auto value = parse_job_time_ns(row.text);
    ASSERT_TRUE(value.ok()) << row.text << ": " << value.error();
    EXPECT_EQ(*value, row.value) << row.text;
  }
  EXPECT_FALSE(parse_job_time_ns("2 fortnights").ok());
}

TEST(Units, JobRatesAreFioSizesPerSecond) {
  EXPECT_EQ(*parse_job_rate_bytes_per_s("100m", 1024), 100 * kMi);
  EXPECT_EQ(*parse_job_rate_bytes_per_s("100MiB/s", 1024), 100 * kMi);
  EXPECT_EQ(*parse_job_rate_bytes_per_s("1MB/s", 1024), kMi);
  EXPECT_EQ(*parse_job_rate_bytes_per_s("1MB/s", 1000), 1'000'000u);
  EXPECT_FALSE(parse_job_rate_bytes_per_s("1m,2m", 1024).ok());
}

TEST(Units, NegativeAndOversizedNumbersAreNamedAsWritten) {
  auto negative = parse_count("-1");
  ASSERT_FALSE(negative.ok());
  EXPECT_EQ(negative.error(), "number '-1' must not be negative");
  auto big = parse_count("18446744073709551616");
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.error(), "number '18446744073709551616' is out of range (above 2^64 - 1)");
  EXPECT_TRUE(parse_count("18446744073709551615").ok());
  auto scaled = parse_job_size_bytes("20000000000000000000k", 1024);
  ASSERT_FALSE(scaled.ok());
  EXPECT_NE(scaled.error().find("out of range"), std::string::npos) << scaled.error();
  auto size = parse_size_bytes("-4KiB");
  ASSERT_FALSE(size.ok());
  EXPECT_NE(size.error().find("'-4KiB' must not be negative"), std::string::npos) << size.error();
}

TEST(Units, ControlCharactersInErrorsAreEscaped) {
  for (const char* text : {"4\x01k", "1\n2", "\x1b[31m"}) {
    auto size = parse_job_size_bytes(text, 1024);
    ASSERT_FALSE(size.ok()) << text;
    for (char c : size.error()) EXPECT_GE(static_cast<unsigned char>(c), 0x20) << size.error();
    auto count = parse_count(text);
    ASSERT_FALSE(count.ok()) << text;
    for (char c : count.error()) EXPECT_GE(static_cast<unsigned char>(c), 0x20) << count.error();
  }
}

}  // namespace
}  // namespace zonelab
