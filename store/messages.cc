#include "store/messages.h"

#include "absl/strings/str_cat.h"

namespace paraplan::store {

std::string Shown(absl::string_view text) {
  constexpr size_t kMaxBytes = 100;
  if (text.size() <= kMaxBytes) return std::string(text);
  size_t n = kMaxBytes;
  while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;
  return absl::StrCat(text.substr(0, n), "...");
}

absl::Status ProfileExists(absl::string_view name) {
  return absl::AlreadyExistsError(absl::StrCat("profile \"", Shown(name), "\" exists; UpdateProfile writes a new version"));
}

absl::Status ProfileNotFound(absl::string_view name) {
  return absl::NotFoundError(absl::StrCat("profile \"", Shown(name), "\" not found"));
}

absl::Status VersionNotFound(absl::string_view name, int version, int latest) {
  if (latest <= 0) return absl::NotFoundError(absl::StrCat("profile \"", Shown(name), "\" has no version ", version));
  return absl::NotFoundError(
      absl::StrCat("profile \"", Shown(name), "\" has no version ", version, " (latest is ", latest, ")"));
}

absl::Status MeasurementExists(absl::string_view id) {
  return absl::AlreadyExistsError(absl::StrCat("measurement \"", Shown(id), "\" is already stored"));
}

}  // namespace paraplan::store
