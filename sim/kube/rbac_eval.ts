/**
 * The emulator's RBAC authorizer, for SubjectAccessReviews: the stored (Cluster)Roles and their bindings,
 * evaluated as upstream's `pkg/registry/rbac/validation` and `plugin/pkg/auth/authorizer/rbac` do.
 *
 * - A non-resource request (`nonResourceAttributes`) is allowed only by ClusterRoles bound through
 *   ClusterRoleBindings: a RoleBinding never grants non-resource URLs, even to a ClusterRole.
 * - A `nonResourceURLs` entry matches the path exactly, `*` matches every path, and an entry ending in `*`
 *   matches by prefix (upstream `NonResourceURLMatches`); verbs match exactly or by `*`.
 * - Subjects: `User` by name, `Group` by name, `ServiceAccount` as the user
 *   `system:serviceaccount:<namespace>:<name>` (an empty namespace is the binding's, for RoleBindings).
 * - The apiserver's bootstrap policy binds the `cluster-admin` ClusterRole (everything) to the group
 *   `system:masters`; the emulator stores no bootstrap objects, so that one binding is built in. Other bootstrap
 *   roles (system:discovery, system:public-info-viewer, ...) are not: they grant nothing the CCM's callers need.
 *   ClusterRoles with an `aggregationRule` are evaluated with the rules stored in them, as the controller that
 *   fills them would leave them.
 */
import { isRecord, type KubeObject } from "./resources.ts";
import type { KubeStore } from "./store.ts";

/** Who asks, as a SubjectAccessReview names them. */
export interface RbacUser {
  readonly user: string;
  readonly groups: readonly string[];
}

/** The attributes of one request under review. */
export type RbacRequest =
  | { readonly kind: "nonResource"; readonly path: string; readonly verb: string }
  | {
    readonly kind: "resource";
    readonly verb: string;
    readonly group: string;
    readonly resource: string;
    readonly subresource: string;
    readonly namespace: string;
    readonly name: string;
  };

/** An RBAC decision with the apiserver's reason text. */
export interface RbacDecision {
  readonly allowed: boolean;
  readonly reason: string;
}

const MASTERS = "system:masters";

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
}

function matchesAny(values: readonly string[], wanted: string): boolean {
  return values.includes("*") || values.includes(wanted);
}

function urlMatches(patterns: readonly string[], path: string): boolean {
  return patterns.some((p) =>
    p === "*" || p === path || (p.endsWith("*") && path.startsWith(p.slice(0, -1)))
  );
}

function ruleAllows(rule: Record<string, unknown>, request: RbacRequest): boolean {
  if (!matchesAny(strings(rule.verbs), request.verb)) return false;
  if (request.kind === "nonResource") return urlMatches(strings(rule.nonResourceURLs), request.path);
  if (!matchesAny(strings(rule.apiGroups), request.group)) return false;
  const resources = strings(rule.resources);
  const full = request.subresource ? `${request.resource}/${request.subresource}` : request.resource;
  const resourceOk = resources.includes("*") || resources.includes(full) ||
    (request.subresource !== "" && resources.includes(`*/${request.subresource}`));
  if (!resourceOk) return false;
  const names = strings(rule.resourceNames);
  return names.length === 0 || names.includes(request.name);
}

function subjectName(
  subject: Record<string, unknown>,
  bindingNamespace: string,
  who: RbacUser,
): string | undefined {
  const name = String(subject.name ?? "");
  if (subject.kind === "User" && name === who.user) return `User "${name}"`;
  if (subject.kind === "Group" && who.groups.includes(name)) return `Group "${name}"`;
  if (subject.kind === "ServiceAccount") {
    const ns = String(subject.namespace ?? "") || bindingNamespace;
    if (`system:serviceaccount:${ns}:${name}` === who.user) return `ServiceAccount "${name}/${ns}"`;
  }
  return undefined;
}

function roleOf(store: KubeStore, binding: KubeObject): KubeObject | undefined {
  const ref = isRecord(binding.roleRef) ? binding.roleRef : {};
  const name = String(ref.name ?? "");
  if (ref.kind === "ClusterRole") return store.get("rbac.authorization.k8s.io/clusterroles", name);
  if (ref.kind === "Role") {
    return store.get("rbac.authorization.k8s.io/roles", name, binding.metadata.namespace ?? "");
  }
  return undefined;
}

function bindingGrants(
  store: KubeStore,
  binding: KubeObject,
  who: RbacUser,
  request: RbacRequest,
): string | undefined {
  const namespace = binding.metadata.namespace ?? "";
  const subjects = Array.isArray(binding.subjects) ? binding.subjects.filter(isRecord) : [];
  const subject = subjects.map((s) => subjectName(s, namespace, who)).find((s) => s !== undefined);
  if (!subject) return undefined;
  const role = roleOf(store, binding);
  const rules = Array.isArray(role?.rules) ? role.rules.filter(isRecord) : [];
  if (!rules.some((r) => ruleAllows(r, request))) return undefined;
  const kind = namespace
    ? `RoleBinding "${binding.metadata.name}/${namespace}"`
    : `ClusterRoleBinding "${binding.metadata.name}"`;
  const ref = isRecord(binding.roleRef) ? binding.roleRef : {};
  return `RBAC: allowed by ${kind} of ${String(ref.kind)} "${String(ref.name)}" to ${subject}`;
}

/** Whether the stored RBAC objects allow `request` for `who`, with upstream's reason wording. */
export function evaluateRbac(store: KubeStore, who: RbacUser, request: RbacRequest): RbacDecision {
  if (who.groups.includes(MASTERS)) {
    return {
      allowed: true,
      reason:
        `RBAC: allowed by ClusterRoleBinding "cluster-admin" of ClusterRole "cluster-admin" to Group "${MASTERS}"`,
    };
  }
  const bindings = [
    ...store.list("rbac.authorization.k8s.io/clusterrolebindings"),
    // RoleBindings apply to resource requests in their namespace only.
    ...(request.kind === "resource" && request.namespace !== ""
      ? store.list("rbac.authorization.k8s.io/rolebindings", { namespace: request.namespace })
      : []),
  ];
  for (const binding of bindings) {
    const reason = bindingGrants(store, binding, who, request);
    if (reason) return { allowed: true, reason };
  }
  // No opinion is a denial with an empty reason, as the apiserver answers when no authorizer allows.
  return { allowed: false, reason: "" };
}
