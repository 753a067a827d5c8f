// M^Inter against the worked example of seed 003 §2.3: point C (294.50
// KIOPS, 749.57 us, isolated) and D (169.09 KIOPS, 2179.02 us, 50 % finish)
// at CL=128 give 1.38 with alpha = beta = 0.5, 1.91 with alpha = 0 and 0.43
// with alpha = 1.
#include "workload/interference_model.h"

#include <gtest/gtest.h>

#include <cmath>

namespace zonelab {
namespace {

const InterferencePoint kPaperCL128{294.50, 749.57, 169.09, 2179.02};

TEST(InterferenceModel, ReproducesThePapersWorkedExample) {
  EXPECT_NEAR(interference_distance(kPaperCL128, 0.5), 1.38, 0.005);
  EXPECT_NEAR(interference_distance(kPaperCL128, 0.0), 1.91, 0.005);
  EXPECT_NEAR(interference_distance(kPaperCL128, 1.0), 0.43, 0.005);
}

TEST(InterferenceModel, NoInterferenceIsZero) {
  auto m = m_inter({{100, 10, 100, 10}, {200, 20, 200, 20}}, 0.5);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(*m, 0.0);
}

TEST(InterferenceModel, IsTheMeanOverLevels) {
  InterferencePoint half_throughput{100, 10, 50, 10};  // dT = -0.5, dL = 0
  InterferencePoint double_latency{100, 10, 100, 20};  // dT = 0, dL = 1
  auto m = m_inter({half_throughput, double_latency}, 0.5);
  ASSERT_TRUE(m.ok());
  EXPECT_NEAR(*m, (std::sqrt(0.5 * 0.25) + std::sqrt(0.5)) / 2, 1e-12);
}

TEST(InterferenceModel, RejectsBadInput) {
  EXPECT_FALSE(m_inter({}, 0.5).ok());
  EXPECT_FALSE(m_inter({kPaperCL128}, 1.5).ok());
  EXPECT_FALSE(m_inter({kPaperCL128}, -0.1).ok());
  EXPECT_FALSE(m_inter({{0, 10, 5, 10}}, 0.5).ok());
}

}  // namespace
}  // namespace zonelab
