// Rewrites JSON string values according to the proto field they belong to, keeping the
// rest of the text byte for byte (layout, line numbers, unknown keys, other values).
//
// Contract: RewriteFieldStrings walks `json` as the proto3 JSON mapping of a message of
// type `type`: an object key names a field by its proto name or its JSON name; nested
// messages, repeated fields (arrays) and map values are followed. For every string value
// that sits at a non-message field (a scalar, an enum, or an element / map value of
// one), `rewrite(field, raw)` is called with the text between the quotes as written
// (escapes not decoded); what it returns replaces the whole token, quotes included;
// nullopt keeps it. Keys that name no field, and string values where a message is
// expected (well-known types such as Timestamp), are left alone. Text that is not
// well-formed JSON, or nested deeper than 100 levels, is returned unchanged, so that the
// protobuf parser reports the error on the original. Pure; thread-safe.
// Why a scanner of its own and not nlohmann-json (used for the syntax check, json_error.cc):
// a rewrite must keep every other byte where it was, so that line numbers in later errors
// stay the user's; nlohmann's DOM re-prints the text, and its SAX events carry no offsets.
#ifndef PARAPLAN_CLIENT_JSON_FIELDS_H_
#define PARAPLAN_CLIENT_JSON_FIELDS_H_

#include <functional>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace google::protobuf {
class Descriptor;
class FieldDescriptor;
}  // namespace google::protobuf

namespace paraplan::cli {

using FieldStringRewrite =
    std::function<std::optional<std::string>(const google::protobuf::FieldDescriptor& field, absl::string_view raw)>;

std::string RewriteFieldStrings(absl::string_view json, const google::protobuf::Descriptor* type,
                                const FieldStringRewrite& rewrite);

}  // namespace paraplan::cli

#endif  // PARAPLAN_CLIENT_JSON_FIELDS_H_
