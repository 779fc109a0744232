"""Strict schema walk of Kubernetes objects against the models of Debian's python3-kubernetes.

The python client's model classes are generated from the Kubernetes OpenAPI spec: each class
lists its fields (`attribute_map`: python name -> JSON key) and their types (`openapi_types`).
Walking a manifest through them rejects unknown keys (a typo such as `readinessProbes` is
otherwise silently ignored by kubectl's client side) and wrongly typed values; constructing the
models afterwards (the client's own deserializer) rejects missing required fields.

Debian 12 ships the 1.22 client, older than two things the manifests use on purpose; the
overlay below adds them by hand, each checked as strictly as the rest:
  - Probe.grpc (native gRPC probes, GA in Kubernetes 1.27),
  - autoscaling/v2 (GA in 1.23; field-for-field the same as autoscaling/v2beta2, which the
    1.22 client has).
Resource quantities are typed `str` by the client, but the API accepts numbers too
(`nvidia.com/gpu: 1`), so quantity fields accept both and check the quantity syntax.
"""

import re

from kubernetes import client

import gateway_schemas

QUANTITY = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+|Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?$")

# (apiVersion, kind) -> model class name in the python client.
MODEL_FOR_KIND = {
    ("v1", "Service"): "V1Service",
    ("v1", "ConfigMap"): "V1ConfigMap",
    ("apps/v1", "Deployment"): "V1Deployment",
    ("policy/v1", "PodDisruptionBudget"): "V1PodDisruptionBudget",
    ("autoscaling/v2", "HorizontalPodAutoscaler"): (
        "V2HorizontalPodAutoscaler"
        if hasattr(client, "V2HorizontalPodAutoscaler")
        else "V2beta2HorizontalPodAutoscaler"
    ),
}

# Fields newer than the installed client, as {model: {json key: type}}. Dict types are
# hand-written object schemas: keys with their types, "required" lists the mandatory ones.
OVERLAY_FIELDS = {
    "V1Probe": {"grpc": {"required": ["port"], "fields": {"port": "int", "service": "str"}}},
}
# Fields whose client type is `str` but which hold a Kubernetes quantity.
QUANTITY_FIELDS = {
    ("V1ResourceRequirements", "limits"),
    ("V1ResourceRequirements", "requests"),
}
QUANTITY_SCALARS = {
    ("V2beta2MetricTarget", "averageValue"),
    ("V2beta2MetricTarget", "value"),
    ("V2MetricTarget", "averageValue"),
    ("V2MetricTarget", "value"),
}


# Objects that are not part of the Kubernetes API proper, with hand-written schemas that cover
# the fields these manifests may use (unknown keys are refused, as for the models).
SERVICE_MONITOR = {  # monitoring.coreos.com/v1 (Prometheus Operator CRD), a subset
    "required": ["apiVersion", "kind", "metadata", "spec"],
    "fields": {
        "apiVersion": "str",
        "kind": "str",
        "metadata": "V1ObjectMeta",
        "spec": {
            "required": ["selector", "endpoints"],
            "fields": {
                "selector": "V1LabelSelector",
                "namespaceSelector": {
                    "fields": {"any": "bool", "matchNames": "list[str]"},
                },
                "jobLabel": "str",
                "endpoints": "list[ServiceMonitorEndpoint]",
            },
        },
    },
}
SERVICE_MONITOR_ENDPOINT = {
    "fields": {
        "port": "str",
        "targetPort": "object",
        "path": "str",
        "scheme": "str",
        "interval": "str",
        "scrapeTimeout": "str",
        "honorLabels": "bool",
    },
}
KUSTOMIZATION = {  # kustomize.config.k8s.io/v1beta1, a subset
    "required": ["apiVersion", "kind", "resources"],
    "fields": {
        "apiVersion": "str",
        "kind": "str",
        "namespace": "str",
        "labels": "list[KustomizeLabel]",
        "resources": "list[str]",
        "images": "list[KustomizeImage]",
        "patches": "list[KustomizePatch]",  # the overlays' (deploy/k8s-overlays)
    },
}
NAMED_SCHEMAS = {
    "ServiceMonitorEndpoint": SERVICE_MONITOR_ENDPOINT,
    "KustomizeLabel": {
        "required": ["pairs"],
        "fields": {"pairs": "dict(str, str)", "includeSelectors": "bool",
                   "includeTemplates": "bool"},
    },
    "KustomizeImage": {
        "required": ["name"],
        "fields": {"name": "str", "newName": "str", "newTag": "str", "digest": "str"},
    },
}
SCHEMA_FOR_KIND = {
    ("monitoring.coreos.com/v1", "ServiceMonitor"): SERVICE_MONITOR,
    ("kustomize.config.k8s.io/v1beta1", "Kustomization"): KUSTOMIZATION,
}
# The inference gateway's and KServe's custom resources (gateway_schemas.py).
NAMED_SCHEMAS.update(gateway_schemas.NAMED_SCHEMAS)
SCHEMA_FOR_KIND.update(gateway_schemas.SCHEMA_FOR_KIND)
DURATION = re.compile(r"^(\d+(ms|s|m|h|d|w|y))+$")


class SchemaError(Exception):
    pass


def _check_quantity(value, path, errors):
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        errors.append(f"{path}: expected a quantity (number or string), got {value!r}")
    elif isinstance(value, str) and not QUANTITY.match(value):
        errors.append(f"{path}: {value!r} is not a Kubernetes quantity (e.g. 1, 500m, 8Gi)")


def walk(value, type_spec, path, errors):
    """Appends to `errors` every place where `value` does not fit `type_spec`."""
    if isinstance(type_spec, dict):
        _walk_object_schema(value, type_spec, path, errors)
    elif type_spec in NAMED_SCHEMAS:
        _walk_object_schema(value, NAMED_SCHEMAS[type_spec], path, errors)
    elif type_spec == "quantity":
        _check_quantity(value, path, errors)
    elif type_spec.startswith("list["):
        if not isinstance(value, list):
            errors.append(f"{path}: expected a list, got {type(value).__name__}")
            return
        for i, item in enumerate(value):
            walk(item, type_spec[5:-1], f"{path}[{i}]", errors)
    elif type_spec.startswith("dict("):
        if not isinstance(value, dict):
            errors.append(f"{path}: expected a mapping, got {type(value).__name__}")
            return
        value_type = type_spec[5:-1].split(",", 1)[1].strip()
        for key, item in value.items():
            if not isinstance(key, str):
                errors.append(f"{path}: key {key!r} must be a string")
            walk(item, value_type, f"{path}.{key}", errors)
    elif type_spec in ("str", "datetime", "date"):
        if not isinstance(value, str):
            errors.append(f"{path}: expected a string, got {value!r}")
    elif type_spec == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            errors.append(f"{path}: expected an integer, got {value!r}")
    elif type_spec == "float":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            errors.append(f"{path}: expected a number, got {value!r}")
    elif type_spec == "bool":
        if not isinstance(value, bool):
            errors.append(f"{path}: expected true or false, got {value!r}")
    elif type_spec == "object":
        pass  # IntOrString, RawExtension: anything goes
    else:
        _walk_model(value, type_spec, path, errors)


def _walk_object_schema(value, schema, path, errors):
    if not isinstance(value, dict):
        errors.append(f"{path}: expected a mapping, got {type(value).__name__}")
        return
    fields = schema["fields"]
    for key in schema.get("required", []):
        if key not in value:
            errors.append(f"{path}: required field {key!r} is missing")
    for key, item in value.items():
        if key not in fields:
            errors.append(f"{path}: unknown field {key!r}; expected one of {sorted(fields)}")
        else:
            walk(item, fields[key], f"{path}.{key}", errors)


def _walk_model(value, model_name, path, errors):
    model = getattr(client, model_name, None)
    if model is None:
        raise SchemaError(f"python3-kubernetes has no model {model_name} (at {path})")
    if not isinstance(value, dict):
        errors.append(f"{path}: expected a {model_name} mapping, got {type(value).__name__}")
        return
    json_to_attr = {json_key: attr for attr, json_key in model.attribute_map.items()}
    overlay = OVERLAY_FIELDS.get(model_name, {})
    for key, item in value.items():
        child = f"{path}.{key}"
        if key in overlay:
            walk(item, overlay[key], child, errors)
        elif key not in json_to_attr:
            known = sorted(set(json_to_attr) | set(overlay))
            errors.append(f"{path}: unknown field {key!r} for {model_name}; expected one of {known}")
        elif (model_name, key) in QUANTITY_FIELDS:
            walk(item, "dict(str, quantity)", child, errors)
        elif (model_name, key) in QUANTITY_SCALARS:
            walk(item, "quantity", child, errors)
        else:
            walk(item, model.openapi_types[json_to_attr[key]], child, errors)


def check_object(doc, where):
    """Returns the list of schema errors of one Kubernetes object (empty when valid)."""
    key = (doc.get("apiVersion"), doc.get("kind"))
    if key in SCHEMA_FOR_KIND:
        errors = []
        walk(doc, SCHEMA_FOR_KIND[key], where, errors)
        for i, endpoint in enumerate(doc.get("spec", {}).get("endpoints", []) or []):
            for field in ("interval", "scrapeTimeout"):
                if field in endpoint and not DURATION.match(str(endpoint[field])):
                    errors.append(f"{where}.spec.endpoints[{i}].{field}: {endpoint[field]!r} "
                                  "is not a Prometheus duration (e.g. 5s, 1m)")
        return errors
    model_name = MODEL_FOR_KIND.get(key)
    if model_name is None:
        return [f"{where}: no schema for apiVersion {key[0]!r} kind {key[1]!r}"]
    errors = []
    walk(doc, model_name, where, errors)
    if errors:
        return errors
    # Required fields and enumerations: the client's own deserializer raises ValueError.
    try:
        client.ApiClient()._ApiClient__deserialize(doc, model_name)
    except (ValueError, TypeError) as error:
        errors.append(f"{where}: {error}")
    return errors
