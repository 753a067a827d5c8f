// M^Inter (seed 003, Eq. 1-3); see interference_model.h.
#include "workload/interference_model.h"

#include <fmt/format.h>

#include <cmath>

namespace zonelab {

double interference_distance(const InterferencePoint& p, double alpha) {
  double dt = (p.int_throughput - p.iso_throughput) / p.iso_throughput;
  double dl = (p.int_latency - p.iso_latency) / p.iso_latency;
  return std::sqrt(alpha * dt * dt + (1.0 - alpha) * dl * dl);
}

Result<double> m_inter(const std::vector<InterferencePoint>& levels, double alpha) {
  if (levels.empty()) return Error{"M^Inter needs at least one concurrency level"};
  if (!(alpha >= 0.0 && alpha <= 1.0)) {
    return Error{fmt::format("alpha = {} is outside [0, 1]", alpha)};
  }
  double sum = 0;
  for (size_t i = 0; i < levels.size(); ++i) {
    const InterferencePoint& p = levels[i];
    if (!(p.iso_throughput > 0) || !(p.iso_latency > 0)) {
      return Error{fmt::format("level {}: the isolated run has no throughput or latency", i + 1)};
    }
    sum += interference_distance(p, alpha);
  }
  return sum / static_cast<double>(levels.size());
}

}  // namespace zonelab
