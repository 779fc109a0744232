// The global functions a chat template may call: jinja2's defaults (range, dict, namespace,
// cycler, joiner) and the two transformers adds (raise_exception, strftime_now).
#pragma once

#include "server/jinja/evaluator.h"

namespace slotserve::server::jinja {

void AddGlobals(Scope& scope);

}  // namespace slotserve::server::jinja
