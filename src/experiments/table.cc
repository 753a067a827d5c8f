// Result tables; see table.h.
#include "experiments/table.h"

#include <fmt/format.h>

#include <cmath>

#include "zonelab/assert.h"

namespace zonelab {

Table::Table(std::vector<std::string> columns) : columns_(std::move(columns)) {
  ZL_ASSERT(!columns_.empty());
}

void Table::add_row(std::vector<Cell> row) {
  ZL_ASSERT(row.size() == columns_.size());
  for ([[maybe_unused]] const Cell& cell : row) {
    ZL_ASSERT(!std::holds_alternative<double>(cell) || std::isfinite(std::get<double>(cell)));
  }
  rows_.push_back(std::move(row));
}

std::optional<size_t> Table::column(std::string_view name) const {
  for (size_t i = 0; i < columns_.size(); ++i) {
    if (columns_[i] == name) return i;
  }
  return std::nullopt;
}

std::string cell_text(const Cell& cell) {
  return std::visit(
      [](const auto& value) -> std::string {
        using T = std::decay_t<decltype(value)>;
        if constexpr (std::is_same_v<T, std::string>) {
          return value;
        } else {
          return fmt::format("{}", value);  // shortest round-trip form for reals
        }
      },
      cell);
}

std::optional<double> cell_number(const Cell& cell) {
  if (const auto* i = std::get_if<int64_t>(&cell)) return static_cast<double>(*i);
  if (const auto* u = std::get_if<uint64_t>(&cell)) return static_cast<double>(*u);
  if (const auto* d = std::get_if<double>(&cell)) return *d;
  return std::nullopt;
}

namespace {

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

void append_line(std::string& out, const std::vector<std::string>& fields) {
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i != 0) out += ',';
    out += csv_field(fields[i]);
  }
  out += '\n';
}

}  // namespace

std::string Table::to_csv() const {
  std::string out;
  append_line(out, columns_);
  std::vector<std::string> fields;
  for (const auto& row : rows_) {
    fields.clear();
    for (const Cell& cell : row) fields.push_back(cell_text(cell));
    append_line(out, fields);
  }
  return out;
}

}  // namespace zonelab
