/**
 * Validation of the kinds an install applies (upstream `pkg/apis/rbac/validation` and
 * `pkg/apis/apps/validation`): Roles and their bindings, and DaemonSets. Only the rules a manifest can
 * break this way; the rest of a Pod template (probes, security contexts) is stored as given.
 */
import { isRecord, type KubeObject } from "./resources.ts";
import { fieldError, type StatusCause } from "./status.ts";

const RBAC_GROUP = "rbac.authorization.k8s.io";
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

function strings(value: unknown): string[] | undefined {
  return Array.isArray(value) && value.every((v) => typeof v === "string") ? value : undefined;
}

/** Upstream `ValidateRBACName`: any path segment (`system:ccm` is fine), not `.`, `..`, `/` or `%`. */
export function rbacNameCauses(name: string): StatusCause[] {
  if (name !== "." && name !== ".." && !/[/%]/.test(name) && name !== "") return [];
  return [fieldError("metadata.name", "Invalid", `may not be '.', '..' or contain '/' or '%'`, name)];
}

function ruleCauses(rule: unknown, i: number, namespaced: boolean): StatusCause[] {
  const at = `rules[${i}]`;
  if (!isRecord(rule)) return [fieldError(at, "Invalid", "must be an object")];
  const causes: StatusCause[] = [];
  if (!strings(rule.verbs)?.length) {
    causes.push(fieldError(`${at}.verbs`, "Required", "verbs must contain at least one value"));
  }
  const urls = strings(rule.nonResourceURLs) ?? [];
  if (urls.length) {
    if (namespaced) {
      causes.push(
        fieldError(
          `${at}.nonResourceURLs`,
          "Invalid",
          "namespaced rules cannot apply to non-resource URLs",
          urls,
        ),
      );
    }
    if (strings(rule.apiGroups)?.length || strings(rule.resources)?.length) {
      causes.push(
        fieldError(
          `${at}.nonResourceURLs`,
          "Invalid",
          "rules cannot apply to both regular resources and non-resource URLs",
          urls,
        ),
      );
    }
    return causes;
  }
  if (!strings(rule.apiGroups)?.length) {
    causes.push(
      fieldError(`${at}.apiGroups`, "Required", "resource rules must supply at least one api group"),
    );
  }
  if (!strings(rule.resources)?.length) {
    causes.push(
      fieldError(`${at}.resources`, "Required", "resource rules must supply at least one resource"),
    );
  }
  return causes;
}

function roleCauses(obj: KubeObject, namespaced: boolean): StatusCause[] {
  const rules = obj.rules ?? [];
  if (!Array.isArray(rules)) return [fieldError("rules", "Invalid", "must be a list")];
  return rules.flatMap((r, i) => ruleCauses(r, i, namespaced));
}

function subjectCauses(subject: unknown, i: number, clusterBinding: boolean): StatusCause[] {
  const at = `subjects[${i}]`;
  if (!isRecord(subject)) return [fieldError(at, "Invalid", "must be an object")];
  const kind = subject.kind;
  if (kind !== "ServiceAccount" && kind !== "User" && kind !== "Group") {
    return [
      fieldError(`${at}.kind`, "NotSupported", 'supported values: "ServiceAccount", "User", "Group"', kind),
    ];
  }
  const causes: StatusCause[] = [];
  if (typeof subject.name !== "string" || subject.name === "") {
    causes.push(fieldError(`${at}.name`, "Required"));
  }
  if (kind === "ServiceAccount") {
    if (subject.apiGroup !== undefined && subject.apiGroup !== "") {
      causes.push(fieldError(`${at}.apiGroup`, "NotSupported", 'supported values: ""', subject.apiGroup));
    }
    if (clusterBinding && (typeof subject.namespace !== "string" || subject.namespace === "")) {
      causes.push(fieldError(`${at}.namespace`, "Required"));
    }
  } else if (subject.apiGroup !== RBAC_GROUP) {
    causes.push(
      fieldError(`${at}.apiGroup`, "NotSupported", `supported values: "${RBAC_GROUP}"`, subject.apiGroup),
    );
  }
  return causes;
}

function bindingCauses(obj: KubeObject, clusterBinding: boolean): StatusCause[] {
  const ref = isRecord(obj.roleRef) ? obj.roleRef : {};
  const kinds = clusterBinding ? ["ClusterRole"] : ["Role", "ClusterRole"];
  const causes: StatusCause[] = [];
  if (ref.apiGroup !== RBAC_GROUP) {
    causes.push(
      fieldError("roleRef.apiGroup", "NotSupported", `supported values: "${RBAC_GROUP}"`, ref.apiGroup),
    );
  }
  if (!kinds.includes(String(ref.kind))) {
    causes.push(
      fieldError(
        "roleRef.kind",
        "NotSupported",
        `supported values: ${kinds.map((k) => `"${k}"`).join(", ")}`,
        ref.kind,
      ),
    );
  }
  if (typeof ref.name !== "string" || ref.name === "") causes.push(fieldError("roleRef.name", "Required"));
  const subjects = Array.isArray(obj.subjects) ? obj.subjects : [];
  return [...causes, ...subjects.flatMap((s, i) => subjectCauses(s, i, clusterBinding))];
}

function matchesLabels(selector: Record<string, unknown>, labels: Record<string, unknown>): boolean {
  const match = isRecord(selector.matchLabels) ? selector.matchLabels : {};
  return Object.entries(match).every(([k, v]) => labels[k] === v);
}

function containerCauses(container: unknown, i: number): StatusCause[] {
  const at = `spec.template.spec.containers[${i}]`;
  if (!isRecord(container)) return [fieldError(at, "Invalid", "must be an object")];
  const causes: StatusCause[] = [];
  if (typeof container.name !== "string" || !DNS_LABEL.test(container.name)) {
    causes.push(fieldError(`${at}.name`, container.name ? "Invalid" : "Required", undefined, container.name));
  }
  if (typeof container.image !== "string" || container.image.trim() === "") {
    causes.push(fieldError(`${at}.image`, "Required"));
  }
  return causes;
}

function daemonSetCauses(obj: KubeObject): StatusCause[] {
  const spec = isRecord(obj.spec) ? obj.spec : {};
  const template = isRecord(spec.template) ? spec.template : {};
  const labels = isRecord(template.metadata) && isRecord(template.metadata.labels)
    ? template.metadata.labels
    : {};
  const causes: StatusCause[] = [];
  if (!isRecord(spec.selector) || Object.keys(spec.selector).length === 0) {
    causes.push(fieldError("spec.selector", "Required"));
  } else if (!matchesLabels(spec.selector, labels)) {
    causes.push(
      fieldError(
        "spec.template.metadata.labels",
        "Invalid",
        "`selector` does not match template `labels`",
        labels,
      ),
    );
  }
  const podSpec = isRecord(template.spec) ? template.spec : {};
  const containers = Array.isArray(podSpec.containers) ? podSpec.containers : [];
  if (containers.length === 0) causes.push(fieldError("spec.template.spec.containers", "Required"));
  causes.push(...containers.flatMap(containerCauses));
  if (podSpec.restartPolicy !== undefined && podSpec.restartPolicy !== "Always") {
    causes.push(
      fieldError(
        "spec.template.spec.restartPolicy",
        "NotSupported",
        'supported values: "Always"',
        podSpec.restartPolicy,
      ),
    );
  }
  const strategy = isRecord(spec.updateStrategy) ? spec.updateStrategy.type : undefined;
  if (strategy !== undefined && strategy !== "RollingUpdate" && strategy !== "OnDelete") {
    causes.push(
      fieldError(
        "spec.updateStrategy.type",
        "NotSupported",
        'supported values: "OnDelete", "RollingUpdate"',
        strategy,
      ),
    );
  }
  return causes;
}

/** Validators of these kinds, by kind. */
export const INSTALL_KIND_CAUSES: Record<string, (obj: KubeObject) => StatusCause[]> = {
  ClusterRole: (obj) => roleCauses(obj, false),
  Role: (obj) => roleCauses(obj, true),
  ClusterRoleBinding: (obj) => bindingCauses(obj, true),
  RoleBinding: (obj) => bindingCauses(obj, false),
  DaemonSet: daemonSetCauses,
};

/** Fields upstream forbids changing after create: a binding's roleRef, a DaemonSet's selector. */
export function immutableCauses(kind: string, next: KubeObject, old: KubeObject): StatusCause[] {
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  if ((kind === "RoleBinding" || kind === "ClusterRoleBinding") && !same(next.roleRef, old.roleRef)) {
    return [fieldError("roleRef", "Invalid", "cannot change roleRef", next.roleRef)];
  }
  const selector = (o: KubeObject) => (isRecord(o.spec) ? o.spec.selector : undefined);
  if (kind === "DaemonSet" && !same(selector(next), selector(old))) {
    return [fieldError("spec.selector", "Invalid", "field is immutable", selector(next))];
  }
  return [];
}
