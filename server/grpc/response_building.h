// Engine events -> slotserve.v1 messages (the other half of the edge, see request_parsing.h).
#pragma once

#include <string>

#include "engine/generation_events.h"
#include "google/protobuf/repeated_field.h"
#include "slotserve/v1/slotserve.pb.h"

namespace slotserve::server {

v1::FinishReason ToProtoFinishReason(engine::FinishReason reason);

// Appends a chunk's ids, text and logprobs to `tokens`, so several chunks that arrive while a
// write is in flight go out as one message, in order.
void AppendChunk(const engine::TokenChunk& chunk, v1::Tokens* tokens);

// Appends logprobs (one entry per token: a chunk's generated ones, or its prompt's scores).
void AppendLogprobs(const std::vector<engine::GeneratedTokenLogprobs>& tokens,
                    google::protobuf::RepeatedPtrField<v1::TokenLogprob>* logprobs);

void FillFinished(const engine::Finished& finished, const std::string& request_id,
                  v1::Finished* proto);

}  // namespace slotserve::server
