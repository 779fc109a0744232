// Engine events -> slotserve.v1 messages (the other half of the edge, see request_parsing.h).
#pragma once

#include <string>

#include "google/protobuf/repeated_field.h"
#include "engine/generation_events.h"
#include "slotserve/v1/slotserve.pb.h"

namespace slotserve::server {

v1::FinishReason ToProtoFinishReason(engine::FinishReason reason);

// Appends a chunk's ids, text and logprobs to `tokens`, so several chunks that arrive while a
// write is in flight go out as one message, in order.
void AppendChunk(const engine::TokenChunk& chunk, v1::Tokens* tokens);

// Appends a chunk's logprobs (one entry per generated token).
void AppendLogprobs(const engine::TokenChunk& chunk,
                    google::protobuf::RepeatedPtrField<v1::TokenLogprob>* logprobs);

void FillFinished(const engine::Finished& finished, const std::string& request_id,
                  v1::Finished* proto);

}  // namespace slotserve::server
