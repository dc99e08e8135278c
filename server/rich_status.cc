#include "server/rich_status.h"

#include "absl/strings/ascii.h"
#include "google/rpc/error_details.pb.h"

namespace paraplan::server {

std::string FieldOf(absl::string_view message) {
  const size_t colon = message.find(": ");
  if (colon == 0 || colon == absl::string_view::npos) return "";
  const absl::string_view path = message.substr(0, colon);
  if (!absl::ascii_isalpha(static_cast<unsigned char>(path.front()))) return "";
  for (char c : path) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.' && c != '[' && c != ']') return "";
  }
  return std::string(path);
}

grpc::Status ToGrpc(const absl::Status& s) {
  if (s.ok()) return grpc::Status::OK;
  const auto code = static_cast<grpc::StatusCode>(s.code());
  const std::string message(s.message());
  google::rpc::Status rich;
  if (s.code() == absl::StatusCode::kInvalidArgument) {
    const std::string field = FieldOf(message);
    if (field.empty()) return grpc::Status(code, message);
    google::rpc::BadRequest bad;
    google::rpc::BadRequest::FieldViolation* v = bad.add_field_violations();
    v->set_field(field);
    v->set_description(message.substr(field.size() + 2));
    rich.add_details()->PackFrom(bad);
  } else if (s.code() == absl::StatusCode::kResourceExhausted) {
    google::rpc::RetryInfo retry;
    retry.mutable_retry_delay()->set_seconds(kRetryDelayS);
    rich.add_details()->PackFrom(retry);
  } else {
    return grpc::Status(code, message);
  }
  rich.set_code(static_cast<int>(code));
  rich.set_message(message);
  return grpc::Status(code, message, rich.SerializeAsString());
}

}  // namespace paraplan::server
