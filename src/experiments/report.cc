// Experiment JSON documents and set reports; see report.h.
#include "experiments/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>

#include "zonelab/assert.h"

namespace zonelab {
namespace {

using Json = nlohmann::ordered_json;

Json cell_json(const Cell& cell) {
  return std::visit([](const auto& value) { return Json(value); }, cell);
}

Json plot_json(const PlotSpec& plot) {
  Json j = {{"x", plot.x},           {"y", plot.y},           {"series", plot.series},
            {"xlabel", plot.xlabel}, {"ylabel", plot.ylabel}, {"series_label", plot.series_label},
            {"title", plot.title},   {"logx", plot.logx},     {"logy", plot.logy}};
  if (!plot.order.empty()) j["order"] = plot.order;
  // Written only when set, so the documents of plain line plots stay as
  // they were.
  if (!plot.kind.empty()) j["kind"] = plot.kind;
  if (!plot.panel.empty()) j["panel"] = plot.panel;
  if (!plot.references.empty()) j["references"] = plot.references;
  return j;
}

std::string paper_text(const Comparison& c) {
  return c.paper ? format_number(*c.paper) : std::string("-");
}

// How far the model is from the paper, in percent of the paper's number.
std::string difference_text(const Comparison& c) {
  if (!c.paper || *c.paper == 0) return "-";
  double percent = (c.measured - *c.paper) / *c.paper * 100;
  if (std::fabs(percent) < 0.05) return "0%";
  return fmt::format("{:+.1f}%", percent);
}

std::string escape_cell(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

std::string kind_text(const Comparison& c) {
  std::string text(evidence_name(c.kind));
  if (!c.basis.empty()) text += ": " + c.basis;
  return text;
}

void append_comparisons(std::string& md, const ExperimentResult& result) {
  md +=
      "| quantity | paper | measured | vs paper | unit | kind |\n"
      "|---|---:|---:|---:|---|---|\n";
  std::vector<std::string> notes;
  for (const Comparison& c : result.comparisons) {
    std::string mark;
    if (!c.note.empty()) {
      // A note shared by several rows is written once.
      auto it = std::find(notes.begin(), notes.end(), c.note);
      if (it == notes.end()) it = notes.insert(notes.end(), c.note);
      mark = fmt::format(" ({})", it - notes.begin() + 1);
    }
    md += fmt::format("| {}{} | {} | {} | {} | {} | {} |\n", escape_cell(c.quantity), mark,
                      paper_text(c), format_number(c.measured), difference_text(c), c.unit,
                      escape_cell(kind_text(c)));
  }
  md += "\n";
  for (size_t i = 0; i < notes.size(); ++i) {
    md += fmt::format("({}) {}\n", i + 1, notes[i]);
  }
  if (!notes.empty()) md += "\n";
}

std::string cell_for_people(const Cell& cell) {
  auto number = cell_number(cell);
  return number ? format_number(*number) : cell_text(cell);
}

// The plotted column as a grid: a row per x value, a column per series,
// both in the order they first appear in the table. With an `order`
// column, a row per value of it and x / y in each cell.
void append_grid(std::string& md, const ExperimentResult& result) {
  const Table& table = result.table;
  const PlotSpec& plot = result.plot;
  auto xi = table.column(plot.x);
  auto yi = table.column(plot.y);
  auto si = table.column(plot.series);
  if (!xi || !yi || !si) return;
  std::optional<size_t> oi;
  if (!plot.order.empty()) {
    oi = table.column(plot.order);
    if (!oi) return;
  }
  const size_t row_key = oi ? *oi : *xi;
  std::vector<std::string> xs;
  std::vector<std::string> series;
  auto index_of = [](std::vector<std::string>& list, const std::string& value) {
    for (size_t i = 0; i < list.size(); ++i) {
      if (list[i] == value) return i;
    }
    list.push_back(value);
    return list.size() - 1;
  };
  std::vector<std::vector<std::string>> grid;
  for (const auto& row : table.rows()) {
    size_t r = index_of(xs, cell_for_people(row[row_key]));
    size_t c = index_of(series, cell_text(row[*si]));
    if (grid.size() <= r) grid.resize(r + 1);
    if (grid[r].size() <= c) grid[r].resize(c + 1);
    grid[r][c] = oi ? fmt::format("{} / {}", cell_for_people(row[*xi]), cell_for_people(row[*yi]))
                    : cell_for_people(row[*yi]);
  }
  if (oi) {
    md += fmt::format("Measured {} / {} by {} ({} / {}):\n\n| {} |", plot.xlabel, plot.ylabel,
                      plot.series_label, plot.x, plot.y,
                      escape_cell(plot.order_label.empty() ? plot.order : plot.order_label));
  } else {
    md += fmt::format("Measured {} by {} ({}):\n\n| {} |", plot.ylabel, plot.series_label, plot.y,
                      escape_cell(plot.xlabel));
  }
  for (const auto& s : series) md += fmt::format(" {} |", escape_cell(s));
  md += "\n|---:|";
  for (size_t i = 0; i < series.size(); ++i) md += "---:|";
  md += "\n";
  for (size_t r = 0; r < xs.size(); ++r) {
    md += fmt::format("| {} |", xs[r]);
    for (size_t c = 0; c < series.size(); ++c) {
      md += fmt::format(" {} |", c < grid[r].size() && !grid[r][c].empty() ? grid[r][c] : "-");
    }
    md += "\n";
  }
  md += "\n";
}

// Within this share of the paper's (non-zero) number, an emerged row is
// listed as a match at the head of the report.
constexpr double kMatchWithin = 0.25;

bool is_match(const Comparison& c) {
  return c.paper && *c.paper != 0 &&
         std::fabs(c.measured - *c.paper) <= kMatchWithin * std::fabs(*c.paper);
}

// The head of a set's report: per experiment, how many rows are of each
// kind, and the emerged rows that match the paper, by name.
void append_evidence(std::string& md, const std::vector<ExperimentRun>& runs) {
  md += fmt::format(
      "## Which numbers are evidence\n\n"
      "Every comparison row below states its kind: *fitted* (a parameter was calibrated to the "
      "paper's number, or to one it follows from; the row names the parameter), *closed form* "
      "(it follows from the configuration's arithmetic) or *emerged* (it came out of the "
      "model's dynamics with nothing set to produce it). Only an emerged number that agrees "
      "with the paper is evidence for the model. A match is within {:.0f}% of a non-zero paper "
      "number.\n\n"
      "| experiment | rows | fitted | closed form | emerged | emerged with a paper number | "
      "emerged matches |\n|---|---:|---:|---:|---:|---:|---:|\n",
      kMatchWithin * 100);
  std::array<size_t, 6> total{};
  std::string matches;
  for (const ExperimentRun& run : runs) {
    std::array<size_t, 6> n{};
    std::string listed;
    for (const Comparison& c : run.result.comparisons) {
      ZL_ASSERT(c.kind != Evidence::kUnstated);
      ++n[0];
      if (c.kind == Evidence::kFitted) ++n[1];
      if (c.kind == Evidence::kClosedForm) ++n[2];
      if (c.kind != Evidence::kEmerged) continue;
      ++n[3];
      if (c.paper) ++n[4];
      if (!is_match(c)) continue;
      ++n[5];
      listed +=
          fmt::format("{}{} ({})", listed.empty() ? "" : "; ", c.quantity, difference_text(c));
    }
    md += fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", run.experiment->name, n[0], n[1],
                      n[2], n[3], n[4], n[5]);
    for (size_t i = 0; i < n.size(); ++i) total[i] += n[i];
    if (!listed.empty()) matches += fmt::format("- {}: {}\n", run.experiment->name, listed);
  }
  if (runs.size() > 1) {
    md += fmt::format("| all | {} | {} | {} | {} | {} | {} |\n", total[0], total[1], total[2],
                      total[3], total[4], total[5]);
  }
  md += "\n";
  md += matches.empty() ? std::string("No emerged number matches the paper.\n\n")
                        : "The emerged matches:\n\n" + matches + "\n";
}

}  // namespace

Json comparison_json(const Comparison& c) {
  Json item = {{"quantity", c.quantity},
               {"unit", c.unit},
               {"paper", c.paper ? Json(*c.paper) : Json(nullptr)},
               {"measured", c.measured},
               {"kind", evidence_name(c.kind)}};
  if (c.kind == Evidence::kFitted) item["parameter"] = c.basis;
  if (c.kind == Evidence::kClosedForm) item["arithmetic"] = c.basis;
  if (!c.note.empty()) item["note"] = c.note;
  return item;
}

std::string format_number(double value) {
  ZL_ASSERT(std::isfinite(value));
  std::string text = fmt::format("{:.6g}", value);
  if (text.find('e') == std::string::npos) return text;
  // Very small or large magnitudes: plain digits read better in a table.
  return fmt::format("{:.6f}", value);
}

Json experiment_json(const ExperimentSet& set, const ExperimentRun& run, bool quick) {
  const Experiment& e = *run.experiment;
  const ExperimentResult& r = run.result;
  Json j;
  j["set"] = set.name;
  j["experiment"] = e.name;
  j["title"] = e.title;
  j["source"] = e.source;
  j["description"] = e.description;
  j["quick"] = quick;
  j["parameters"] = r.parameters;
  Json comparisons = Json::array();
  for (const Comparison& c : r.comparisons) comparisons.push_back(comparison_json(c));
  j["comparison"] = comparisons;
  j["columns"] = r.table.columns();
  Json rows = Json::array();
  for (const auto& row : r.table.rows()) {
    Json cells = Json::array();
    for (const Cell& cell : row) cells.push_back(cell_json(cell));
    rows.push_back(cells);
  }
  j["rows"] = rows;
  j["plot"] = plot_json(r.plot);
  j["files"] = {{"csv", fmt::format("{}.csv", e.name)}, {"png", fmt::format("{}.png", e.name)}};
  return j;
}

std::string set_report_markdown(const ExperimentSet& set, const std::vector<ExperimentRun>& runs,
                                const std::string& command, bool quick) {
  std::string md = fmt::format("# {}: {} ({})\n\n", set.name, set.title, set.source);
  md += fmt::format(
      "Regenerate with `{}`. The \"paper\" columns are the numbers the paper reports, written "
      "into the experiment definitions; the \"measured\" columns come from running the "
      "model.{}\n\n",
      command, quick ? " This is a quick run: fewer points than the full experiment." : "");
  append_evidence(md, runs);
  for (const ExperimentRun& run : runs) {
    const Experiment& e = *run.experiment;
    md += fmt::format("## {}: {} ({})\n\n{}\n\n", e.name, e.title, e.source, e.description);
    if (run.plotted) md += fmt::format("![{}]({}.png)\n\n", e.name, e.name);
    append_comparisons(md, run.result);
    append_grid(md, run.result);
    md += fmt::format("Data: [{0}.csv]({0}.csv), [{0}.json]({0}.json).\n\n", e.name);
  }
  md.pop_back();  // one newline at the end
  return md;
}

}  // namespace zonelab
