// Validates Kubernetes objects (a JSON array on stdin) with kubernetes-models: JSON schemas
// generated from current Kubernetes releases and from the Prometheus Operator CRDs, checked by
// ajv (types, required fields, enumerations, patterns). Complements k8s_schema.py, which uses
// Debian's older python client but also refuses unknown fields (these schemas allow them).
// Run with NODE_PATH=<node-tools>/node_modules. Prints every error; exit 1 if any.
"use strict";

const MODELS = {
  "v1/Service": () => require("kubernetes-models/v1/Service").Service,
  "apps/v1/Deployment": () => require("kubernetes-models/apps/v1/Deployment").Deployment,
  "policy/v1/PodDisruptionBudget": () =>
    require("kubernetes-models/policy/v1/PodDisruptionBudget").PodDisruptionBudget,
  "autoscaling/v2/HorizontalPodAutoscaler": () =>
    require("kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler").HorizontalPodAutoscaler,
  "monitoring.coreos.com/v1/ServiceMonitor": () =>
    require("@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor")
      .ServiceMonitor,
};

const input = require("fs").readFileSync(0, "utf8");
const objects = JSON.parse(input);
let failures = 0;
for (const { where, object } of objects) {
  const key = `${object.apiVersion}/${object.kind}`;
  const load = MODELS[key];
  if (!load) {
    console.log(`FAIL ${where}: no kubernetes-models schema for ${key}`);
    failures++;
    continue;
  }
  const Model = load();
  try {
    new Model(object).validate();
    console.log(`ok   ${where} (${key})`);
  } catch (error) {
    console.log(`FAIL ${where}: ${error.message}`);
    failures++;
  }
}
console.log(`${objects.length} objects, ${failures} invalid`);
process.exit(failures ? 1 : 0);
