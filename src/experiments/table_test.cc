// Result tables as CSV: header, one line per row, exact reals, quoting.
#include "experiments/table.h"

#include <gtest/gtest.h>

namespace zonelab {
namespace {

TEST(Table, CsvHasAHeaderAndOneLinePerRow) {
  Table t({"name", "count", "delta", "value"});
  t.add_row({std::string("a"), uint64_t{3}, int64_t{-2}, 0.5});
  t.add_row({std::string("b"), uint64_t{18446744073709551615u}, int64_t{0}, 48.230825699});
  EXPECT_EQ(t.to_csv(),
            "name,count,delta,value\n"
            "a,3,-2,0.5\n"
            "b,18446744073709551615,0,48.230825699\n");
}

TEST(Table, RealsReadBackExactly) {
  double third = 1.0 / 3.0;
  Table t({"x"});
  t.add_row({third});
  std::string csv = t.to_csv();
  EXPECT_EQ(std::stod(csv.substr(csv.find('\n') + 1)), third);
}

TEST(Table, TextWithCommasQuotesOrLineEndsIsQuoted) {
  Table t({"text"});
  t.add_row({std::string("a,b")});
  t.add_row({std::string("say \"hi\"")});
  t.add_row({std::string("two\nlines")});
  EXPECT_EQ(t.to_csv(), "text\n\"a,b\"\n\"say \"\"hi\"\"\"\n\"two\nlines\"\n");
}

TEST(Table, FindsColumnsByName) {
  Table t({"x", "y"});
  EXPECT_EQ(t.column("y"), 1u);
  EXPECT_FALSE(t.column("z").has_value());
}

TEST(Table, CellsAsNumbers) {
  EXPECT_EQ(cell_number(Cell{uint64_t{7}}), 7.0);
  EXPECT_EQ(cell_number(Cell{-1.5}), -1.5);
  EXPECT_FALSE(cell_number(Cell{std::string("7")}).has_value());
}

}  // namespace
}  // namespace zonelab
