// Escaping text for HTML and SVG (the report page, report/report.cc).
//
// Contract: HtmlEscape returns `text` with & < > " ' replaced by character references,
// so that the result is safe both as element content and inside a quoted attribute
// value of HTML or SVG. Bytes >= 0x80 pass through (the page is UTF-8); other control
// characters except tab, newline and carriage return become U+FFFD (not allowed in XML).
#ifndef PARAPLAN_REPORT_HTML_ESCAPE_H_
#define PARAPLAN_REPORT_HTML_ESCAPE_H_

#include <string>

#include "absl/strings/string_view.h"

namespace paraplan::cli {

std::string HtmlEscape(absl::string_view text);

}  // namespace paraplan::cli

#endif  // PARAPLAN_REPORT_HTML_ESCAPE_H_
