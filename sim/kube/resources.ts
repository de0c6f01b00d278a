/** The resource types the Kubernetes emulator serves, and the object shape it stores. */

/** Object metadata as the emulator reads and writes it (a subset of `ObjectMeta`, other keys are kept). */
export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  [key: string]: unknown;
}

/** A stored Kubernetes object: plain JSON with metadata. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  [key: string]: unknown;
}

/** One served resource type. */
export interface ResourceDef {
  /** Store key: the plural for core/v1, `<group>/<plural>` otherwise (`"events.k8s.io/events"`). */
  readonly key: string;
  /** API group, `""` for core. */
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  readonly singular: string;
  readonly kind: string;
  readonly namespaced: boolean;
  /** Has a `/status` subresource: status is writable only there. */
  readonly status: boolean;
  readonly shortNames: readonly string[];
  /** PUT of a missing object creates it (events, leases, endpoints upstream). */
  readonly createOnUpdate: boolean;
  /** DELETE answers with the deleted object rather than a Success Status. */
  readonly returnsDeleted: boolean;
  /** Fields a `fieldSelector` may use besides `metadata.name` and `metadata.namespace`. */
  readonly fields: readonly string[];
  /** The verbs discovery lists: every verb, or `create` alone for the review resources. */
  readonly verbs: readonly string[];
}

const VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"] as const;

/** Verbs every served resource supports (used by discovery). */
export const RESOURCE_VERBS: readonly string[] = VERBS;

function def(
  group: string,
  version: string,
  plural: string,
  kind: string,
  extra: Partial<ResourceDef> = {},
): ResourceDef {
  return {
    key: group === "" ? plural : `${group}/${plural}`,
    group,
    version,
    plural,
    singular: kind.toLowerCase(),
    kind,
    namespaced: true,
    status: false,
    shortNames: [],
    createOnUpdate: false,
    returnsDeleted: false,
    fields: [],
    verbs: VERBS,
    ...extra,
  };
}

const EVENT_FIELDS = [
  "involvedObject.kind",
  "involvedObject.namespace",
  "involvedObject.name",
  "involvedObject.uid",
  "involvedObject.apiVersion",
  "involvedObject.resourceVersion",
  "involvedObject.fieldPath",
  "reason",
  "reportingComponent",
  "source",
  "type",
];

/** Every resource the emulator serves. */
export const RESOURCES: readonly ResourceDef[] = [
  def("", "v1", "namespaces", "Namespace", {
    namespaced: false,
    status: true,
    shortNames: ["ns"],
    returnsDeleted: true,
    fields: ["status.phase"],
  }),
  def("", "v1", "nodes", "Node", {
    namespaced: false,
    status: true,
    shortNames: ["no"],
    fields: ["spec.unschedulable"],
  }),
  def("", "v1", "services", "Service", { status: true, shortNames: ["svc"], returnsDeleted: true }),
  def("", "v1", "endpoints", "Endpoints", { shortNames: ["ep"], createOnUpdate: true }),
  def("", "v1", "secrets", "Secret", { fields: ["type"] }),
  def("", "v1", "configmaps", "ConfigMap", { shortNames: ["cm"] }),
  def("", "v1", "pods", "Pod", {
    status: true,
    shortNames: ["po"],
    returnsDeleted: true,
    fields: [
      "spec.nodeName",
      "spec.restartPolicy",
      "spec.schedulerName",
      "spec.serviceAccountName",
      "status.phase",
    ],
  }),
  def("", "v1", "events", "Event", { shortNames: ["ev"], createOnUpdate: true, fields: EVENT_FIELDS }),
  def("events.k8s.io", "v1", "events", "Event", {
    shortNames: ["ev"],
    createOnUpdate: true,
    fields: ["reason", "regarding.kind", "regarding.namespace", "regarding.name", "regarding.uid", "type"],
  }),
  def("coordination.k8s.io", "v1", "leases", "Lease", { createOnUpdate: true }),
  // What an install applies (deploy/ccm.yaml): kubectl maps and validates it only against served kinds.
  def("", "v1", "serviceaccounts", "ServiceAccount", { shortNames: ["sa"] }),
  def("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", { namespaced: false }),
  def("rbac.authorization.k8s.io", "v1", "clusterrolebindings", "ClusterRoleBinding", { namespaced: false }),
  def("rbac.authorization.k8s.io", "v1", "roles", "Role"),
  def("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding"),
  def("apps", "v1", "daemonsets", "DaemonSet", { status: true, shortNames: ["ds"] }),
  // Create-only reviews (sim/kube/reviews.ts): the secure port's delegated authentication and authorisation.
  def("authentication.k8s.io", "v1", "tokenreviews", "TokenReview", { namespaced: false, verbs: ["create"] }),
  def("authorization.k8s.io", "v1", "subjectaccessreviews", "SubjectAccessReview", {
    namespaced: false,
    verbs: ["create"],
  }),
];

/** Looks a resource up by its store key (`"nodes"`, `"events.k8s.io/events"`, `"coordination.k8s.io/leases"`). */
export function resourceByKey(key: string): ResourceDef | undefined {
  if (key === "leases") key = "coordination.k8s.io/leases";
  return RESOURCES.find((r) => r.key === key);
}

/** Looks a resource up by group, version and plural, as they appear in a URL. */
export function resourceByPath(group: string, version: string, plural: string): ResourceDef | undefined {
  return RESOURCES.find((r) => r.group === group && r.version === version && r.plural === plural);
}

/** The `apiVersion` string of a resource (`"v1"`, `"coordination.k8s.io/v1"`). */
export function apiVersionOf(def: ResourceDef): string {
  return def.group === "" ? def.version : `${def.group}/${def.version}`;
}

/** The store key of one object: `ns/name` for namespaced resources, `name` otherwise. */
export function objectKey(def: ResourceDef, name: string, namespace?: string): string {
  return def.namespaced ? `${namespace ?? ""}/${name}` : name;
}

/** True for a non-null, non-array object. */
export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
