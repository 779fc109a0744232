#include "server/grpc/proto_field_names.h"

#include <string>
#include <vector>

#include "server/field_renaming.h"

namespace slotserve::server {

absl::Status WithProtoFieldNames(const absl::Status& status, const v1::GenerateRequest& request) {
  if (status.ok()) return status;
  std::vector<FieldRename> fields;
  if (request.prompt_case() == v1::GenerateRequest::kTokenIds) {
    fields.push_back({"prompt_ids", "token_ids.ids"});
  }
  if (request.source().input_case() == v1::Source::kTokenIds) {
    fields.push_back({"source_ids", "source.token_ids.ids"});
  }
  std::string message(status.message());
  if (RenameLeadingField(fields, &message) == nullptr) return status;
  return absl::Status(status.code(), message);
}

}  // namespace slotserve::server
