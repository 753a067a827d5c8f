// Bounded text input: files are read only up to their limit, and TOML is
// measured for nesting before toml++ sees it, counting what nests (tables,
// dotted keys, arrays, inline tables) and nothing that only looks like it
// (strings, comments).
#include "common/text_input.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

namespace zonelab {
namespace {

std::string dotted(int parts) {
  std::string key = "a";
  for (int i = 1; i < parts; ++i) key += ".a";
  return key;
}

std::string repeat(std::string_view piece, int times) {
  std::string out;
  for (int i = 0; i < times; ++i) out += piece;
  return out;
}

bool within(const std::string& text) { return check_toml_bounds(text, "t.toml").ok(); }

TEST(TextInput, DottedKeysNestUpToTheLimit) {
  EXPECT_TRUE(within(dotted(32) + " = 1\n"));
  EXPECT_FALSE(within(dotted(33) + " = 1\n"));
  EXPECT_TRUE(parse_toml(dotted(32) + " = 1\n", "t.toml").ok());
}

TEST(TextInput, HeadersAndTheirKeysCountTogether) {
  EXPECT_TRUE(within("[" + dotted(32) + "]\n"));
  EXPECT_FALSE(within("[" + dotted(32) + "]\nk = 1\n"));
  EXPECT_TRUE(within("[" + dotted(31) + "]\nk = 1\n"));
  // An array of tables adds its element: [[a]] holds a table inside an array.
  EXPECT_TRUE(within("[[" + dotted(30) + "]]\nk = 1\n"));
  EXPECT_FALSE(within("[[" + dotted(31) + "]]\nk = 1\n"));
  // A later, shallower header starts again from its own depth.
  EXPECT_TRUE(within("[" + dotted(31) + "]\nk = 1\n[b]\n" + dotted(30) + " = 1\n"));
}

TEST(TextInput, ArraysAndInlineTablesNestUpToTheLimit) {
  EXPECT_TRUE(within("x = " + repeat("[", 32) + repeat("]", 32) + "\n"));
  EXPECT_FALSE(within("x = " + repeat("[", 33) + repeat("]", 33) + "\n"));
  EXPECT_TRUE(within("x = " + repeat("{a=", 31) + "1" + repeat("}", 31) + "\n"));
  EXPECT_FALSE(within("x = " + repeat("{a=", 32) + "1" + repeat("}", 32) + "\n"));
  // Dotted keys inside inline tables and arrays of inline tables count too.
  EXPECT_FALSE(within("x = [{" + dotted(31) + " = 1}]\n"));
  EXPECT_TRUE(within("x = [{" + dotted(29) + " = 1}, 2.5, \"]\"]\n"));
  EXPECT_TRUE(parse_toml("x = " + repeat("[", 32) + repeat("]", 32) + "\n", "t").ok());
}

TEST(TextInput, StringsAndCommentsDoNotNest) {
  std::string brackets = repeat("[{", 100);
  EXPECT_TRUE(within("x = \"" + brackets + "\"\n"));
  EXPECT_TRUE(within("x = '" + brackets + "'\n"));
  EXPECT_TRUE(within("x = \"\"\"\n" + brackets + "\n\"\"\"\n"));
  EXPECT_TRUE(within("x = '''" + brackets + "''''\n"));
  EXPECT_TRUE(within("# " + brackets + "\nx = 1 # " + dotted(100) + "\n"));
  EXPECT_TRUE(within("x = \"a\\\"" + brackets + "\"\n"));
  EXPECT_TRUE(within("\"" + dotted(100) + "\" = 1\n"));  // one quoted key
  EXPECT_TRUE(within("x = [\n  1, # " + brackets + "\n  2,\n]\n"));
  // A value with dots is not a key.
  EXPECT_TRUE(within("x = [" + repeat("1.5, ", 100) + "]\n"));
}

TEST(TextInput, TheErrorNamesTheSourceLineColumnAndLimit) {
  std::string text = "seed = 1\n\n" + dotted(40) + " = 1\n";
  auto checked = check_toml_bounds(text, "dir/c.toml");
  ASSERT_FALSE(checked.ok());
  EXPECT_EQ(checked.error(),
            "dir/c.toml:3:66: TOML nested deeper than the limit of 32 levels (tables, dotted keys, "
            "arrays and inline tables count together)");
  auto control = check_toml_bounds(dotted(40) + " = 1\n", "a\nb");
  ASSERT_FALSE(control.ok());
  EXPECT_EQ(control.error().find('\n'), std::string::npos);
}

TEST(TextInput, HugeNestingIsRefusedWithoutOverflowingTheStack) {
  std::string keys = dotted(200'000) + " = 1\n";
  EXPECT_FALSE(parse_toml(keys, "t").ok());
  std::string header = "[" + dotted(200'000) + "]\n";
  EXPECT_FALSE(parse_toml(header, "t").ok());
  std::string arrays = "x = " + repeat("[", 200'000);
  EXPECT_FALSE(parse_toml(arrays, "t").ok());
}

TEST(TextInput, MalformedTomlIsLeftToTheParserToName) {
  auto parsed = parse_toml("x = [1, 2\ny = \"open\n", "t.toml");
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.error().find("malformed TOML"), std::string::npos) << parsed.error();
}

TEST(TextInput, ADocumentAboveTheSizeLimitIsRefused) {
  std::string big(kMaxTextInputBytes + 1, '#');
  auto parsed = parse_toml(big, "big");
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.error().find("1 MiB"), std::string::npos) << parsed.error();
}

TEST(TextInput, FilesAreReadOnlyUpToTheLimit) {
  // /dev/zero never ends: the read stops one byte past the limit.
  auto endless = read_text_file("/dev/zero", "job file");
  ASSERT_FALSE(endless.ok());
  EXPECT_EQ(endless.error(), "/dev/zero: job file is larger than the limit of 1 MiB");
  auto dir = read_text_file(testing::TempDir(), "configuration file");
  ASSERT_FALSE(dir.ok());
  EXPECT_NE(dir.error().find("is a directory, not a configuration file"), std::string::npos);
  auto empty = read_text_file("", "job file");
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.error().find("empty path"), std::string::npos);
  auto missing = read_text_file(testing::TempDir() + "no\nsuch.toml", "job file");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().find('\n'), std::string::npos) << missing.error();

  std::string path = testing::TempDir() + "zonelab_text_input.toml";
  {
    std::ofstream out(path);
    out << "seed = 3\n";
  }
  auto read = read_text_file(path, "configuration file");
  ASSERT_TRUE(read.ok()) << read.error();
  EXPECT_EQ(*read, "seed = 3\n");
  std::remove(path.c_str());
}

}  // namespace
}  // namespace zonelab
