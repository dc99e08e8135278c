// SampleValue: one sample of a Prometheus text exposition, for tests that read /metrics
// or Metrics::Text(). Header-only, no dependencies beyond the standard library.
#ifndef PARAPLAN_TESTS_SERVER_PROMETHEUS_TEXT_H_
#define PARAPLAN_TESTS_SERVER_PROMETHEUS_TEXT_H_

#include <cmath>
#include <cstdlib>
#include <string>

namespace paraplan::server {

// The value of the sample `series` (name with its labels, exactly as exposed) in a
// Prometheus text exposition; NaN when absent.
inline double SampleValue(const std::string& text, const std::string& series) {
  size_t at = 0;
  while ((at = text.find(series + " ", at)) != std::string::npos) {
    if (at == 0 || text[at - 1] == '\n') return std::strtod(text.c_str() + at + series.size() + 1, nullptr);
    at += series.size();
  }
  return std::nan("");
}

}  // namespace paraplan::server

#endif  // PARAPLAN_TESTS_SERVER_PROMETHEUS_TEXT_H_
