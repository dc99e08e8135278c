#include "estimator/inputs/echo.h"

#include "absl/strings/str_cat.h"

namespace paraplan {

std::string Abbreviated(absl::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  size_t n = max_bytes;
  // Back up to the first byte of a character (continuation bytes are 10xxxxxx).
  while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;
  return absl::StrCat(text.substr(0, n), "...");
}

}  // namespace paraplan
