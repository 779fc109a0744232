// OpenAI request fields that have no effect here, and which of them the API accepts anyway
// (issue 57: the SDKs and frameworks send several of them, often as null, and were refused).
//
// Accepted, with any value of the right type, because ignoring them cannot change what the
// client gets back: store and metadata (OpenAI keeps the completion for its dashboard; nothing
// is kept here), service_tier (OpenAI's pricing tiers), user and safety_identifier (end-user
// labels for OpenAI's abuse monitoring), prompt_cache_key (a routing hint for OpenAI's prompt
// cache; the prefix-state cache here needs none), reasoning_effort and verbosity (settings of
// reasoning models; these models do not reason and answer as they always do), prediction
// (predicted output, which only makes OpenAI's answer faster, never different).
//
// Refused when they ask for something that would be missing from the answer: audio (spoken
// output), modalities other than ["text"], web_search_options (a web search), functions and a
// function_call other than "none" (the deprecated form of tool calls). Null, which OpenAI's
// API treats as absent, is accepted for every one of them.
#pragma once

#include "absl/status/status.h"
#include "server/http/json_params.h"

namespace slotserve::server::http {

// Reads (counts as known) the fields above from a request body; INVALID_ARGUMENT naming the
// field when one has the wrong type or asks for what this server cannot give.
absl::Status ReadInertFields(JsonParams& params);

}  // namespace slotserve::server::http
