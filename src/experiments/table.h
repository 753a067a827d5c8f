// A table of results: named columns and rows of cells (text, whole numbers
// or reals), written as CSV. Reals are written in their shortest form that
// reads back exactly, so the same numbers always give the same bytes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace zonelab {

using Cell = std::variant<std::string, int64_t, uint64_t, double>;

class Table {
 public:
  explicit Table(std::vector<std::string> columns);

  // A row has one cell per column; reals are finite.
  void add_row(std::vector<Cell> row);

  const std::vector<std::string>& columns() const { return columns_; }
  const std::vector<std::vector<Cell>>& rows() const { return rows_; }
  std::optional<size_t> column(std::string_view name) const;

  // RFC 4180: a header line, then one line per row, "\n" line ends; a text
  // cell holding a comma, a quote or a line end is quoted.
  std::string to_csv() const;

 private:
  std::vector<std::string> columns_;
  std::vector<std::vector<Cell>> rows_;
};

// A cell as CSV text (unquoted) and as a real (text cells: nullopt).
std::string cell_text(const Cell& cell);
std::optional<double> cell_number(const Cell& cell);

}  // namespace zonelab
