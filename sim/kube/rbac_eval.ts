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
 * - A binding of the user whose role does not exist grants nothing and is named in a denial's reason
 *   (`RBAC: clusterrole.rbac.authorization.k8s.io "x" not found`), as upstream's rule visitor collects it.
 *
 * `authorizeRequest` is the apiserver's authorization filter over the same evaluation, for an emulator that
 * enforces RBAC on API requests (`KubeSimOptions.enforceRbac`): a denial is upstream's 403 Forbidden Status.
 */
import type { AuditEntry } from "./audit.ts";
import { isRecord, type KubeObject } from "./resources.ts";
import { type StatusDetails, StatusError } from "./status.ts";
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

function roleOf(store: KubeStore, binding: KubeObject): KubeObject | string {
  const ref = isRecord(binding.roleRef) ? binding.roleRef : {};
  const name = String(ref.name ?? "");
  const role = ref.kind === "ClusterRole"
    ? store.get("rbac.authorization.k8s.io/clusterroles", name)
    : ref.kind === "Role"
    ? store.get("rbac.authorization.k8s.io/roles", name, binding.metadata.namespace ?? "")
    : undefined;
  // The lister's NotFound text, which upstream's visitor keeps as the denial's reason.
  return role ?? `${String(ref.kind ?? "").toLowerCase()}.rbac.authorization.k8s.io "${name}" not found`;
}

/** What one binding says about a request: the allowing reason, a missing role, or nothing. */
type BindingVerdict = { allowed: string } | { error: string } | undefined;

function bindingGrants(
  store: KubeStore,
  binding: KubeObject,
  who: RbacUser,
  request: RbacRequest,
): BindingVerdict {
  const namespace = binding.metadata.namespace ?? "";
  const subjects = Array.isArray(binding.subjects) ? binding.subjects.filter(isRecord) : [];
  const subject = subjects.map((s) => subjectName(s, namespace, who)).find((s) => s !== undefined);
  if (!subject) return undefined;
  const role = roleOf(store, binding);
  if (typeof role === "string") return { error: role };
  const rules = Array.isArray(role.rules) ? role.rules.filter(isRecord) : [];
  if (!rules.some((r) => ruleAllows(r, request))) return undefined;
  const kind = namespace
    ? `RoleBinding "${binding.metadata.name}/${namespace}"`
    : `ClusterRoleBinding "${binding.metadata.name}"`;
  const ref = isRecord(binding.roleRef) ? binding.roleRef : {};
  return { allowed: `RBAC: allowed by ${kind} of ${String(ref.kind)} "${String(ref.name)}" to ${subject}` };
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
  const errors: string[] = [];
  for (const binding of bindings) {
    const verdict = bindingGrants(store, binding, who, request);
    if (verdict && "allowed" in verdict) return { allowed: true, reason: verdict.allowed };
    if (verdict && !errors.includes(verdict.error)) errors.push(verdict.error);
  }
  // No opinion is a denial; its reason is empty unless a binding's role was missing (upstream's aggregate:
  // one error as it is, several in brackets).
  if (errors.length === 0) return { allowed: false, reason: "" };
  const aggregate = errors.length === 1 ? errors[0] : `[${errors.join(", ")}]`;
  return { allowed: false, reason: `RBAC: ${aggregate}` };
}

/** The request attributes of an audited API request. */
function requestOf(entry: AuditEntry): RbacRequest {
  if (!entry.resourceRequest) return { kind: "nonResource", path: entry.path, verb: entry.verb };
  return {
    kind: "resource",
    verb: entry.verb,
    group: entry.apiGroup,
    resource: entry.resource,
    subresource: entry.subresource,
    namespace: entry.namespace,
    name: entry.name,
  };
}

/** Upstream's escaping of a forbidden message, so it never reads as HTML. */
function sanitize(text: string): string {
  return text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
}

/**
 * Upstream's forbidden text (`responsewriters.forbiddenMessage`): who cannot do what, where. A subresource is
 * named with its resource (`resource "nodes/status"`).
 */
export function forbiddenMessage(user: string, entry: AuditEntry): string {
  if (!entry.resourceRequest) return `User "${user}" cannot ${entry.verb} path "${entry.path}"`;
  const resource = entry.subresource ? `${entry.resource}/${entry.subresource}` : entry.resource;
  const what = `User "${user}" cannot ${entry.verb} resource "${resource}" in API group "${entry.apiGroup}"`;
  return entry.namespace ? `${what} in the namespace "${entry.namespace}"` : `${what} at the cluster scope`;
}

/**
 * The apiserver's authorization filter: undefined when `user` may make the request, else its 403 (upstream's
 * `ForbiddenStatusError` over `apierrors.NewForbidden`: `<resource>[.<group>] ["<name>"] is forbidden: <why>`,
 * details `{name, group, kind: <resource>}` with empty fields left out). Non-resource requests are allowed to
 * every authenticated user: the bootstrap `system:discovery` and `system:public-info-viewer` bindings, which
 * the emulator does not store, grant what clients read there (discovery, `/version`, `/openapi`).
 */
export function authorizeRequest(
  store: KubeStore,
  user: RbacUser,
  entry: AuditEntry,
): StatusError | undefined {
  if (!entry.resourceRequest) return undefined;
  const decision = evaluateRbac(store, user, requestOf(entry));
  if (decision.allowed) return undefined;
  const why = sanitize(forbiddenMessage(user.user, entry));
  const text = decision.reason ? `${why}: ${decision.reason}` : why;
  const qualified = entry.apiGroup ? `${entry.resource}.${entry.apiGroup}` : entry.resource;
  const message = entry.name
    ? `${qualified} "${entry.name}" is forbidden: ${text}`
    : `${qualified} is forbidden: ${text}`;
  const details: StatusDetails = {};
  if (entry.name) details.name = entry.name;
  if (entry.apiGroup) details.group = entry.apiGroup;
  details.kind = entry.resource;
  return new StatusError(403, "Forbidden", message, details);
}
