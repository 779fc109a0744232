#include "server/field_renaming.h"

namespace slotserve::server {

const FieldRename* RenameLeadingField(std::span<const FieldRename> table, std::string* message) {
  for (const FieldRename& rename : table) {
    const size_t end = rename.engine_name.size();
    if (message->compare(0, end, rename.engine_name) != 0) continue;
    if (end < message->size() && (*message)[end] != ' ' && (*message)[end] != '[') continue;
    message->replace(0, end, rename.wire_name);
    return &rename;
  }
  return nullptr;
}

}  // namespace slotserve::server
