"""Hand-written schemas of the custom resources the inference-gateway and KServe manifests use,
in k8s_schema.py's form (unknown keys refused, types and required fields checked), each
following the API version it names as that version is published:

  - InferencePool, inference.networking.k8s.io/v1: Gateway API Inference Extension v1.0
    (api/v1/inferencepool_types.go): spec.selector.matchLabels, spec.targetPorts (exactly one
    {number}), spec.endpointPickerRef {group, kind, name, port {number}, failureMode
    FailOpen|FailClose}, port required for kind Service.
  - HTTPRoute, gateway.networking.k8s.io/v1: Gateway API v1.x standard channel (parentRefs,
    hostnames, rules with matches, filters, backendRefs, timeouts).
  - BackendTrafficPolicy, gateway.envoyproxy.io/v1alpha1: Envoy Gateway v1.x (targetRefs,
    loadBalancer with type and consistentHash), the subset used here.
  - ServingRuntime, serving.kserve.io/v1alpha1: KServe v0.1x (supportedModelFormats,
    multiModel, protocolVersions, annotations, containers as core/v1 Containers), a subset.
  - Kustomization patches (path or patch, with an optional target).
"""

import re

PORT_NUMBER = "int"


def resource(spec):
    """A custom resource's top level: apiVersion, kind, metadata and `spec`, all required."""
    return {
        "required": ["apiVersion", "kind", "metadata", "spec"],
        "fields": {"apiVersion": "str", "kind": "str", "metadata": "V1ObjectMeta",
                   "spec": spec},
    }


LABEL_SELECTOR = {"required": ["matchLabels"], "fields": {"matchLabels": "dict(str, str)"}}

INFERENCE_POOL = resource({
    "required": ["selector", "targetPorts", "endpointPickerRef"],
    "fields": {
        "selector": LABEL_SELECTOR,
        "targetPorts": "list[InferencePoolPort]",
        "endpointPickerRef": {
            "required": ["name"],
            "fields": {"group": "str", "kind": "str", "name": "str",
                       "port": "InferencePoolPort", "failureMode": "str"},
        },
    },
})

PARENT_REFERENCE = {
    "required": ["name"],
    "fields": {"group": "str", "kind": "str", "namespace": "str", "name": "str",
               "sectionName": "str", "port": PORT_NUMBER},
}
HTTP_ROUTE_MATCH = {
    "fields": {
        "path": {"fields": {"type": "str", "value": "str"}},
        "headers": "list[HTTPHeaderMatch]",
        "queryParams": "list[HTTPHeaderMatch]",
        "method": "str",
    },
}
HTTP_BACKEND_REF = {
    "required": ["name"],
    "fields": {"group": "str", "kind": "str", "name": "str", "namespace": "str",
               "port": PORT_NUMBER, "weight": "int", "filters": "list[object]"},
}
HTTP_ROUTE = resource({
    "fields": {
        "parentRefs": "list[GatewayParentReference]",
        "hostnames": "list[str]",
        "rules": "list[HTTPRouteRule]",
    },
})
HTTP_ROUTE_RULE = {
    "fields": {
        "name": "str",
        "matches": "list[HTTPRouteMatch]",
        "filters": "list[object]",
        "backendRefs": "list[HTTPBackendRef]",
        "timeouts": {"fields": {"request": "str", "backendRequest": "str"}},
    },
}

BACKEND_TRAFFIC_POLICY = resource({
    "required": ["targetRefs"],
    "fields": {
        "targetRefs": "list[PolicyTargetReference]",
        "loadBalancer": {
            "required": ["type"],
            "fields": {
                "type": "str",
                "consistentHash": {
                    "required": ["type"],
                    "fields": {
                        "type": "str",
                        "header": {"required": ["name"], "fields": {"name": "str"}},
                        "cookie": {"required": ["name"],
                                   "fields": {"name": "str", "ttl": "str"}},
                    },
                },
            },
        },
    },
})

SERVING_RUNTIME = resource({
    "required": ["supportedModelFormats", "containers"],
    "fields": {
        "annotations": "dict(str, str)",
        "supportedModelFormats": "list[ServingRuntimeModelFormat]",
        "multiModel": "bool",
        "disabled": "bool",
        "protocolVersions": "list[str]",
        "containers": "list[V1Container]",
        "volumes": "list[V1Volume]",
        "nodeSelector": "dict(str, str)",
        "tolerations": "list[V1Toleration]",
    },
})

NAMED_SCHEMAS = {
    "InferencePoolPort": {"required": ["number"], "fields": {"number": PORT_NUMBER}},
    "GatewayParentReference": PARENT_REFERENCE,
    "HTTPRouteRule": HTTP_ROUTE_RULE,
    "HTTPRouteMatch": HTTP_ROUTE_MATCH,
    "HTTPHeaderMatch": {"required": ["name", "value"],
                        "fields": {"type": "str", "name": "str", "value": "str"}},
    "HTTPBackendRef": HTTP_BACKEND_REF,
    "PolicyTargetReference": {"required": ["group", "kind", "name"],
                              "fields": {"group": "str", "kind": "str", "name": "str",
                                         "sectionName": "str"}},
    "ServingRuntimeModelFormat": {"required": ["name"],
                                  "fields": {"name": "str", "version": "str",
                                             "autoSelect": "bool", "priority": "int"}},
    "KustomizePatch": {"fields": {"path": "str", "patch": "str",
                                  "target": {"fields": {"group": "str", "version": "str",
                                                        "kind": "str", "name": "str",
                                                        "namespace": "str",
                                                        "labelSelector": "str"}}}},
}
SCHEMA_FOR_KIND = {
    ("inference.networking.k8s.io/v1", "InferencePool"): INFERENCE_POOL,
    ("gateway.networking.k8s.io/v1", "HTTPRoute"): HTTP_ROUTE,
    ("gateway.envoyproxy.io/v1alpha1", "BackendTrafficPolicy"): BACKEND_TRAFFIC_POLICY,
    ("serving.kserve.io/v1alpha1", "ServingRuntime"): SERVING_RUNTIME,
}

# Enumerations the published versions define, as (kind, dotted path under spec) -> values.
ENUMS = {
    ("InferencePool", "endpointPickerRef.failureMode"): {"FailOpen", "FailClose"},
    ("HTTPRoute", "rules.matches.path.type"): {"Exact", "PathPrefix", "RegularExpression"},
    ("HTTPRoute", "rules.matches.headers.type"): {"Exact", "RegularExpression"},
    ("BackendTrafficPolicy", "loadBalancer.type"): {"ConsistentHash", "LeastRequest", "Random",
                                                    "RoundRobin"},
    ("BackendTrafficPolicy", "loadBalancer.consistentHash.type"): {"SourceIP", "Header",
                                                                   "Cookie"},
}
# Gateway API durations (GEP-2257): e.g. 10s, 1h30m, at most one of each unit.
GATEWAY_DURATION = re.compile(r"^([0-9]{1,5}(h|m|s|ms)){1,4}$")


def values_at(node, parts):
    """Every value at the dotted path under `node`, descending into lists."""
    if isinstance(node, list):
        return [v for item in node for v in values_at(item, parts)]
    if not parts:
        return [node]
    if not isinstance(node, dict) or parts[0] not in node:
        return []
    return values_at(node[parts[0]], parts[1:])


def check_values(doc, where):
    """Enumerations, port ranges, the pool's one target port and the route timeouts."""
    errors = []
    kind, spec = doc.get("kind"), doc.get("spec", {})
    for (enum_kind, path), allowed in ENUMS.items():
        if enum_kind != kind:
            continue
        for value in values_at(spec, path.split(".")):
            if value not in allowed:
                errors.append(f"{where}.spec.{path}: {value!r} is not one of {sorted(allowed)}")
    if kind == "InferencePool":
        ports = spec.get("targetPorts", [])
        if len(ports) != 1:
            errors.append(f"{where}.spec.targetPorts: v1 takes exactly one port, got {len(ports)}")
        picker = spec.get("endpointPickerRef", {})
        if picker.get("kind", "Service") == "Service" and "port" not in picker:
            errors.append(f"{where}.spec.endpointPickerRef: port is required for a Service")
        for port in values_at(spec, ["targetPorts", "number"]) + \
                values_at(spec, ["endpointPickerRef", "port", "number"]):
            if isinstance(port, int) and not 1 <= port <= 65535:  # the schema checks the type
                errors.append(f"{where}: port {port} is outside 1..65535")
    if kind == "HTTPRoute":
        for timeout in values_at(spec, ["rules", "timeouts", "request"]):
            if isinstance(timeout, str) and not GATEWAY_DURATION.match(timeout):
                errors.append(f"{where}.spec.rules.timeouts.request: {timeout!r} is not a "
                              "Gateway API duration (e.g. 600s)")
    return errors
