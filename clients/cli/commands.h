// slotserve-cli's commands. Each returns the process exit status: 0 on success, 1 when the
// server could not be reached or refused (a one-line message on stderr says which and why).
#pragma once

#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>
#include "absl/time/time.h"

namespace slotserve::clients {

struct CliContext {
  std::shared_ptr<grpc::Channel> channel;
  std::string server;      // the address, for messages
  absl::Duration timeout;  // per RPC; zero = none
  bool json = false;       // one JSON object per message on stdout
  bool quiet = false;      // no summary line on stderr
  std::string api_key;     // sent as "authorization: Bearer <key>" when set
};

// Streams the completion of `prompt` (Generate), writing text to stdout as it arrives.
int RunGenerate(const CliContext& context, const std::string& prompt);
// The same through the unary Complete RPC: the whole text at once.
int RunComplete(const CliContext& context, const std::string& prompt);
int RunInfo(const CliContext& context);
// Exit 0 only when the server reports SERVING.
int RunHealth(const CliContext& context);
int RunTokenize(const CliContext& context, const std::string& text);
// Writes a kept session's state (ExportSession) to stdout as raw bytes.
int RunExportSession(const CliContext& context, const std::string& handle);
// Turns `state` (bytes from export-session) into a session here; prints its handle.
int RunImportSession(const CliContext& context, const std::string& state);

}  // namespace slotserve::clients
