// The engine refuses a request naming the field by its own name (engine/request_validation.h:
// "prompt_ids[3] must be a token id ..."); each front end renames it to what its client sent,
// through one table of its own (server/grpc/proto_field_names.h for gRPC, openai_errors.cc for
// HTTP). This is the renaming both tables use.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace slotserve::server {

struct FieldRename {
  std::string_view engine_name;  // as the engine's message starts: "prompt_ids"
  std::string_view wire_name;    // what the client called it: "token_ids.ids"
};

// Replaces the engine field `message` starts with (followed by a space, an index "[" or the
// end) by its wire name: the first entry of `table` that matches, so an entry must come before
// any other that starts it ("prompt_ids" before "prompt"). Returns that entry, or nullptr (and
// leaves `message` as it was) when the message names no field of the table.
const FieldRename* RenameLeadingField(std::span<const FieldRename> table, std::string* message);

}  // namespace slotserve::server
