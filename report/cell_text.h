// Cell texts shared by the CLI's tables (format.h, plan_table.h) and the plan report
// page (report.h): "16.249 s" / "250.00 ms" / "1.2 h"; GiB with one decimal ("50.2");
// three significant digits with an SI suffix ("194k", "1.46T"); recompute
// "none|selective|full", of a configuration with its modules ("selective (layernorm,
// moe_act)"); schedule "1f1b|gpipe|interleaved|zero-bubble", "-" without
// pipeline parallelism. Pure functions over the message types (no gRPC, no I/O), in the
// report library that the server links too.
#ifndef PARAPLAN_REPORT_CELL_TEXT_H_
#define PARAPLAN_REPORT_CELL_TEXT_H_

#include <string>

#include "paraplan/v1/types.pb.h"

namespace paraplan::cli {

std::string SecondsText(double s);
std::string GibText(double bytes);
std::string SiText(double v);
const char* RecomputeText(v1::Recompute r);
std::string RecomputeText(const v1::ParallelConfig& c);
const char* ScheduleText(const v1::ParallelConfig& c);

}  // namespace paraplan::cli

#endif  // PARAPLAN_REPORT_CELL_TEXT_H_
