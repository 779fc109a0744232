// The global functions a chat template may call: jinja2's defaults (range, dict, namespace,
// cycler, joiner) and the two transformers adds (raise_exception, strftime_now).
#pragma once

#include <memory>
#include <vector>

#include "server/jinja/evaluator.h"

namespace slotserve::server::jinja {

// Every namespace() made while rendering, so that the render can empty them when it ends: a
// template may store a namespace in itself ({% set ns.self = ns %}), a cycle that shared
// ownership alone would never free.
using NamespaceList = std::vector<std::weak_ptr<DictValue>>;

void AddGlobals(Scope& scope, std::shared_ptr<NamespaceList> namespaces);

}  // namespace slotserve::server::jinja
