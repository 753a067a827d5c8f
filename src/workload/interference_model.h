// M^Inter, the I/O management interference model of seed 003 §2.3
// (Eq. 1-3): the mean, over concurrency levels, of the weighted distance
// between a run in isolation and the same run under interference, in
// relative throughput and relative P95 latency.
//
//   M = 1/n * sum_i sqrt(alpha * dT_i^2 + beta * dL_i^2),  beta = 1 - alpha
//   dT_i = (T_int - T_iso) / T_iso,  dL_i = (L_int - L_iso) / L_iso
#pragma once

#include <vector>

#include "zonelab/result.h"

namespace zonelab {

// One concurrency level: throughput (any unit) and latency (any unit) of
// the isolated and the interfered run.
struct InterferencePoint {
  double iso_throughput = 0;
  double iso_latency = 0;
  double int_throughput = 0;
  double int_latency = 0;
};

// The distance of one level (the summand of Eq. 1).
double interference_distance(const InterferencePoint& point, double alpha);

// Eq. 1 over all levels. Errors: no levels, alpha outside [0, 1], an
// isolated throughput or latency that is not positive.
Result<double> m_inter(const std::vector<InterferencePoint>& levels, double alpha);

}  // namespace zonelab
