// Experiment documents and set reports: the paper's numbers beside the
// measured ones, the data, the plot spec, and nothing that varies by run.
#include "experiments/report.h"

#include <gtest/gtest.h>

namespace zonelab {
namespace {

Result<ExperimentResult> fake_run(const RunOptions&) {
  ExperimentResult r;
  r.table = Table({"mode", "x", "y"});
  r.table.add_row({std::string("a"), 1.0, 10.0});
  r.table.add_row({std::string("b"), 1.0, 20.0});
  r.table.add_row({std::string("a"), 2.0, 5.0});
  r.plot = {.x = "x",
            .y = "y",
            .series = "mode",
            .xlabel = "x axis",
            .ylabel = "y axis",
            .series_label = "mode",
            .title = "fake"};
  r.comparisons = {emerged({"y at 1, mode a", "ms", 9.5, 10.0, "approximately"})};
  r.parameters["knob"] = 3;
  return r;
}

constexpr Experiment kFake[] = {{"fake", "A fake", "seed 0 Fig. 1", "What it does.", fake_run}};
const ExperimentSet kSet{"fakes", "Fakes", "seed 0", kFake};

ExperimentRun run_fake(bool plotted) {
  return ExperimentRun{&kFake[0], *fake_run(RunOptions{}), plotted};
}

TEST(Report, JsonHoldsTheDataTheComparisonAndThePlotSpec) {
  auto j = experiment_json(kSet, run_fake(true), false);
  EXPECT_EQ(j["experiment"], "fake");
  EXPECT_EQ(j["columns"].size(), 3u);
  EXPECT_EQ(j["rows"].size(), 3u);
  EXPECT_EQ(j["rows"][1][0], "b");
  EXPECT_EQ(j["comparison"][0]["paper"], 9.5);
  EXPECT_EQ(j["comparison"][0]["measured"], 10.0);
  EXPECT_EQ(j["plot"]["series"], "mode");
  EXPECT_EQ(j["files"]["png"], "fake.png");
  EXPECT_EQ(j["parameters"]["knob"], 3);
}

TEST(Report, MarkdownPutsPaperBesideMeasuredAndNamesTheCommand) {
  std::vector<ExperimentRun> runs;
  runs.push_back(run_fake(true));
  std::string md = set_report_markdown(kSet, runs, "zonelab experiment run fakes", false);
  EXPECT_NE(md.find("`zonelab experiment run fakes`"), std::string::npos);
  EXPECT_NE(md.find("| y at 1, mode a (1) | 9.5 | 10 | +5.3% | ms | emerged |"), std::string::npos)
      << md;
  EXPECT_NE(md.find("(1) approximately"), std::string::npos);
  EXPECT_NE(md.find("![fake](fake.png)"), std::string::npos);
  // The grid: a row per x, a column per series, "-" where a series has no point.
  EXPECT_NE(md.find("| x axis | a | b |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 1 | 10 | 20 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 2 | 5 | - |"), std::string::npos) << md;
}

TEST(Report, NoImageLinkWithoutAPlot) {
  std::vector<ExperimentRun> runs;
  runs.push_back(run_fake(false));
  EXPECT_EQ(set_report_markdown(kSet, runs, "c", false).find(".png"), std::string::npos);
}

// Throughput against latency per level: points ordered by `cl`, a grid row
// per level; a number the paper does not give; a note two rows share.
Result<ExperimentResult> fake_levels(const RunOptions&) {
  ExperimentResult r;
  r.table = Table({"line", "cl", "kiops", "p95_ms"});
  r.table.add_row({std::string("alone"), uint64_t{1}, 1.5, 0.7});
  r.table.add_row({std::string("alone"), uint64_t{2}, 3.0, 0.75});
  r.table.add_row({std::string("busy"), uint64_t{1}, 0.5, 2.5});
  r.plot = {.x = "kiops",
            .y = "p95_ms",
            .series = "line",
            .xlabel = "KIOPS",
            .ylabel = "P95 (ms)",
            .series_label = "run",
            .title = "levels",
            .order = "cl",
            .order_label = "CL"};
  r.comparisons = {fitted("flash.suspend.max", {"M^Inter, busy", "", 0.14, 0.2, "same note"}),
                   closed_form("2 x 0.35", {"M^Inter, other", "", std::nullopt, 0.7, "same note"})};
  return r;
}

constexpr Experiment kLevels[] = {{"levels", "Levels", "seed 0 Fig. 2", "Levels.", fake_levels}};

TEST(Report, EveryRowCarriesItsKindAndTheFittedParameterOrTheArithmetic) {
  ExperimentRun run{&kLevels[0], *fake_levels(RunOptions{}), false};
  auto j = experiment_json(kSet, run, false);
  EXPECT_EQ(j["comparison"][0]["kind"], "fitted");
  EXPECT_EQ(j["comparison"][0]["parameter"], "flash.suspend.max");
  EXPECT_FALSE(j["comparison"][0].contains("arithmetic"));
  EXPECT_EQ(j["comparison"][1]["kind"], "closed form");
  EXPECT_EQ(j["comparison"][1]["arithmetic"], "2 x 0.35");
  auto plain = experiment_json(kSet, run_fake(false), false);
  EXPECT_EQ(plain["comparison"][0]["kind"], "emerged");
  EXPECT_FALSE(plain["comparison"][0].contains("parameter"));
}

TEST(Report, TheHeadCountsTheKindsAndListsTheEmergedMatchesByName) {
  std::vector<ExperimentRun> runs{run_fake(false),
                                  {&kLevels[0], *fake_levels(RunOptions{}), false}};
  // A second emerged row far from the paper: counted, not listed.
  runs[0].result.comparisons.push_back(emerged({"far off", "ms", 1.0, 2.0, ""}));
  std::string md = set_report_markdown(kSet, runs, "c", false);
  EXPECT_NE(md.find("| fake | 2 | 0 | 0 | 2 | 2 | 1 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| levels | 2 | 1 | 1 | 0 | 0 | 0 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| all | 4 | 1 | 1 | 2 | 2 | 1 |"), std::string::npos) << md;
  EXPECT_NE(md.find("- fake: y at 1, mode a (+5.3%)\n"), std::string::npos) << md;
  EXPECT_EQ(md.find("- fake: y at 1, mode a (+5.3%); far off"), std::string::npos) << md;
  // The head comes before the first experiment's section.
  EXPECT_LT(md.find("## Which numbers are evidence"), md.find("## fake:"));
}

TEST(Report, AQuantityThePaperDoesNotGiveHasNoPaperNumber) {
  ExperimentRun run{&kLevels[0], *fake_levels(RunOptions{}), false};
  auto j = experiment_json(kSet, run, false);
  EXPECT_EQ(j["comparison"][0]["paper"], 0.14);
  EXPECT_TRUE(j["comparison"][1]["paper"].is_null());
  EXPECT_EQ(j["comparison"][1]["measured"], 0.7);
  EXPECT_EQ(j["plot"]["order"], "cl");
  std::vector<ExperimentRun> runs{run};
  std::string md = set_report_markdown(kSet, runs, "c", false);
  EXPECT_NE(md.find("| M^Inter, other (1) | - | 0.7 | - |  | closed form: 2 x 0.35 |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("(1) same note\n\n"), std::string::npos) << md;
  EXPECT_EQ(md.find("(2)"), std::string::npos) << md;
}

TEST(Report, AnOrderColumnMakesAGridRowPerLevelWithXAndY) {
  std::vector<ExperimentRun> runs{{&kLevels[0], *fake_levels(RunOptions{}), false}};
  std::string md = set_report_markdown(kSet, runs, "c", false);
  EXPECT_NE(md.find("| CL | alone | busy |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 1 | 1.5 / 0.7 | 0.5 / 2.5 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 2 | 3 / 0.75 | - |"), std::string::npos) << md;
}

TEST(Report, PlotKindPanelAndReferencesAreWrittenOnlyWhenSet) {
  auto plain = experiment_json(kSet, run_fake(false), false);
  EXPECT_FALSE(plain["plot"].contains("kind"));
  EXPECT_FALSE(plain["plot"].contains("panel"));
  EXPECT_FALSE(plain["plot"].contains("references"));
  ExperimentRun run = run_fake(false);
  run.result.plot.kind = "bar";
  run.result.plot.panel = "mode";
  run.result.plot.references = {0.85, 1.0};
  auto j = experiment_json(kSet, run, false);
  EXPECT_EQ(j["plot"]["kind"], "bar");
  EXPECT_EQ(j["plot"]["panel"], "mode");
  EXPECT_EQ(j["plot"]["references"].size(), 2u);
  EXPECT_EQ(j["plot"]["references"][1], 1.0);
}

TEST(Report, AHeatmapGridHasARowPerXAndAColumnPerSeries) {
  ExperimentRun run = run_fake(false);
  run.result.table = Table({"fg", "bg", "m"});
  run.result.table.add_row({std::string("write"), std::string("finish"), 0.26});
  run.result.table.add_row({std::string("write"), std::string("reset"), 0.17});
  run.result.table.add_row({std::string("read"), std::string("finish"), 1.17});
  run.result.plot = {.x = "fg",
                     .y = "m",
                     .series = "bg",
                     .xlabel = "fg",
                     .ylabel = "M",
                     .series_label = "bg",
                     .title = "heat",
                     .kind = "heatmap"};
  std::vector<ExperimentRun> runs{run};
  std::string md = set_report_markdown(kSet, runs, "c", false);
  EXPECT_NE(md.find("| fg | finish | reset |"), std::string::npos) << md;
  EXPECT_NE(md.find("| write | 0.26 | 0.17 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| read | 1.17 | - |"), std::string::npos) << md;
}

TEST(Report, NumbersForPeople) {
  EXPECT_EQ(format_number(77.015), "77.015");
  EXPECT_EQ(format_number(48.230825699), "48.2308");
  EXPECT_EQ(format_number(0.000728653), "0.000728653");
  EXPECT_EQ(format_number(4.1), "4.1");
}

}  // namespace
}  // namespace zonelab
