// The zonelab:// URI: what it accepts, and the one-line refusals of what it
// does not.
#include "rocksdb/uri.h"

#include <gtest/gtest.h>

#include "zonelab/config.h"

namespace zonelab::rocksdb_plugin {
namespace {

TEST(ZonelabUri, APathAloneTakesTheDefaults) {
  auto o = parse_uri("zonelab:///tmp/x/dev.img");
  ASSERT_TRUE(o.ok()) << o.error();
  EXPECT_EQ(o->image, "/tmp/x/dev.img");
  EXPECT_EQ(o->timing, Timing::kModeled);
  EXPECT_EQ(o->time_scale, 1.0);
  EXPECT_EQ(o->scheduler, "mq-deadline");
  EXPECT_FALSE(o->spin);  // auto
  EXPECT_TRUE(o->gc);
  EXPECT_TRUE(o->write_behind);
  EXPECT_EQ(o->stats_path, "/tmp/x/dev.img.stats.json");
  EXPECT_FALSE(o->create_preset);
  EXPECT_FALSE(o->power_cut_after);
}

TEST(ZonelabUri, EveryOptionIsRead) {
  auto o = parse_uri(
      "zonelab:///a//b/./c/../dev%20one.img?timing=off&time_scale=2.5&scheduler=zinc&pacing=sleep"
      "&gc=off&write_behind=off&stats=/tmp/s.json&create=small&finish_threshold=10"
      "&power_cut_after=77");
  ASSERT_TRUE(o.ok()) << o.error();
  EXPECT_EQ(o->image, "/a/b/dev one.img");
  EXPECT_EQ(o->timing, Timing::kOff);
  EXPECT_EQ(o->time_scale, 2.5);
  EXPECT_EQ(o->scheduler, "zinc");
  EXPECT_EQ(o->spin, false);
  EXPECT_FALSE(o->gc);
  EXPECT_FALSE(o->write_behind);
  EXPECT_EQ(o->stats_path, "/tmp/s.json");
  EXPECT_EQ(o->create_preset, "small");
  EXPECT_EQ(o->finish_threshold_pct, 10u);
  EXPECT_EQ(o->power_cut_after, 77u);
  EXPECT_EQ(parse_uri("zonelab:///d.img?timing=on")->timing, Timing::kModeled);
  EXPECT_EQ(parse_uri("zonelab:///d.img?tenant=t-1.x")->tenant, "t-1.x");
  EXPECT_EQ(parse_uri("zonelab:///d.img")->tenant, "");
  EXPECT_EQ(parse_uri("zonelab:///d.img?stats=none")->stats_path, "");
  EXPECT_EQ(parse_uri("zonelab:///d.img?pacing=spin")->spin, true);
  EXPECT_FALSE(parse_uri("zonelab:///d.img?pacing=auto")->spin);
  UriOptions sleep;
  sleep.spin = false;
  EXPECT_FALSE(spin_pacing(sleep));
}

TEST(ZonelabUri, PercentEscapesAreDecodedInThePathAndEveryKeyAndValue) {
  auto o = parse_uri(
      "zonelab:///tmp/my%20dir/dev%3Fone.img?ti%6Ding=of%66&create=sm%61ll"
      "&stats=/tmp/a%26b%3Dc%25.json&sch%65duler=%7Ainc&finish_threshold=1%30");
  ASSERT_TRUE(o.ok()) << o.error();
  EXPECT_EQ(o->image, "/tmp/my dir/dev?one.img");
  EXPECT_EQ(o->timing, Timing::kOff);
  EXPECT_EQ(o->create_preset, "small");
  // An escaped '&' or '=' is a byte of its value, not a separator.
  EXPECT_EQ(o->stats_path, "/tmp/a&b=c%.json");
  EXPECT_EQ(o->scheduler, "zinc");
  EXPECT_EQ(o->finish_threshold_pct, 10u);
  // '+' is not a space outside HTML forms.
  EXPECT_EQ(parse_uri("zonelab:///a+b.img")->image, "/a+b.img");
  // The default statistics path follows the decoded image path.
  EXPECT_EQ(parse_uri("zonelab:///d%20e.img")->stats_path, "/d e.img.stats.json");
  // A key is the same key however it is written.
  auto twice = parse_uri("zonelab:///d.img?gc=on&%67c=off");
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.error().find("given twice"), std::string::npos) << twice.error();
}

TEST(ZonelabUri, EveryPresetNameIsTakenByCreate) {
  for (const std::string& name : preset_names()) {
    auto o = parse_uri("zonelab:///d.img?create=" + name);
    ASSERT_TRUE(o.ok()) << name << ": " << o.error();
    EXPECT_EQ(o->create_preset, name);
  }
}

TEST(ZonelabUri, BadUrisAreRefusedWithWhatIsWrong) {
  struct Case {
    const char* uri;
    const char* says;
  };
  for (const Case& c : {
           Case{"file:///d.img", "not a zonelab:// URI"},
           Case{"zonelab://relative/d.img", "absolute image path"},
           Case{"zonelab://", "absolute image path"},
           Case{"zonelab:///dir/", "names a directory"},
           Case{"zonelab:///d.img?timing=fast", "timing=fast"},
           Case{"zonelab:///d.img?time_scale=0", "time_scale=0"},
           Case{"zonelab:///d.img?time_scale=1e9", "time_scale=1e9"},
           Case{"zonelab:///d.img?time_scale=abc", "not a number"},
           Case{"zonelab:///d.img?scheduler=cfq", "scheduler=cfq"},
           Case{"zonelab:///d.img?pacing=busy", "spin or sleep"},
           Case{"zonelab:///d.img?gc=maybe", "on or off"},
           Case{"zonelab:///d.img?write_behind=yes", "on or off"},
           Case{"zonelab:///d.img?finish_threshold=101", "0 to 100"},
           Case{"zonelab:///d.img?finish_threshold=-1", "0 to 100"},
           Case{"zonelab:///d.img?power_cut_after=x", "count of commands"},
           Case{"zonelab:///d.img?tenant=", "a tenant needs a name"},
           Case{"zonelab:///d.img?tenant=a/b", "only letters"},
           Case{"zonelab:///d.img?tenant=..", "not a directory name"},
           Case{"zonelab:///d.img?colour=blue", "unknown option 'colour'"},
           Case{"zonelab:///d.img?timing", "has no value"},
           Case{"zonelab:///d.img?gc=on&gc=off", "given twice"},
           Case{"zonelab:///d%2.img", "bad %-escape"},
           Case{"zonelab:///d%00.img", "bad %-escape"},
           Case{"zonelab:///d.img?stats=", "needs a path"},
           Case{"zonelab:///d.img?create=", "needs a preset"},
           Case{"zonelab:///d.img?create=bogus", "create=bogus: not a preset (small, "},
           Case{"zonelab:///d.img?create=Small", "not a preset"},
           Case{"zonelab:///d.img?timing=of%6", "the value of timing 'of%6' has a bad %-escape"},
           Case{"zonelab:///d.img?timing=o%zz", "bad %-escape"},
           Case{"zonelab:///d.img?ti%6=off", "option 'ti%6' has a bad %-escape"},
           Case{"zonelab:///d.img?stats=%00", "bad %-escape"},
           Case{"zonelab:///d.img?timing=of%20f", "timing=of f"},
       }) {
    auto o = parse_uri(c.uri);
    ASSERT_FALSE(o.ok()) << c.uri;
    EXPECT_NE(o.error().find(c.says), std::string::npos) << c.uri << ": " << o.error();
    EXPECT_EQ(o.error().find('\n'), std::string::npos) << c.uri;
  }
  std::string huge = "zonelab:///" + std::string(kUriBytesMax, 'x');
  EXPECT_FALSE(parse_uri(huge).ok());
  auto control = parse_uri("zonelab:///d.img?colour\n=x");
  ASSERT_FALSE(control.ok());
  EXPECT_EQ(control.error().find('\n'), std::string::npos);
}

}  // namespace
}  // namespace zonelab::rocksdb_plugin
