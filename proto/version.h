// The version of this paraplan build and of the API it speaks, shared by the server
// (Planner.GetVersion, GET /v1/version) and the CLI (`paraplan --version`).
//
// ApiFingerprint() hashes the paraplan.v1 descriptors compiled into the binary
// (services.proto and the paraplan/ files it imports), so a client and a server built
// from the same .proto files print the same fingerprint and one built from changed
// files prints another. Header-only (protobuf and the generated code, no gRPC) so that
// both binaries use this one definition. Thread-safe.
#ifndef PARAPLAN_PROTO_VERSION_H_
#define PARAPLAN_PROTO_VERSION_H_

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/descriptor.pb.h"
#include "paraplan/v1/services.pb.h"

namespace paraplan {

inline constexpr char kVersion[] = "0.11.0";
inline constexpr char kApiVersion[] = "paraplan.v1";

// 16 hex digits: FNV-1a 64 over the serialized descriptors, services.proto first, then
// its paraplan/ imports depth-first.
inline std::string ApiFingerprint() {
  uint64_t h = 14695981039346656037ull;
  std::set<std::string> seen;
  std::vector<const google::protobuf::FileDescriptor*> todo = {v1::EstimateRequest::descriptor()->file()};
  while (!todo.empty()) {
    const google::protobuf::FileDescriptor* f = todo.back();
    todo.pop_back();
    if (!seen.insert(f->name()).second) continue;
    google::protobuf::FileDescriptorProto proto;
    f->CopyTo(&proto);
    for (const unsigned char c : proto.SerializeAsString()) {
      h = (h ^ c) * 1099511628211ull;
    }
    for (int i = f->dependency_count() - 1; i >= 0; --i) {
      if (absl::StartsWith(f->dependency(i)->name(), "paraplan/")) todo.push_back(f->dependency(i));
    }
  }
  return absl::StrFormat("%016x", h);
}

}  // namespace paraplan

#endif  // PARAPLAN_PROTO_VERSION_H_
