/**
 * RBAC as the apiserver evaluates it, for the manifests in `deploy/`: which rules a ServiceAccount holds
 * through (Cluster)RoleBindings, whether they allow a request, which of them no request used, and the
 * least rules that allow a set of requests. Pure: the traffic comes from the Kubernetes emulator's audit log.
 */

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** One `PolicyRule`. */
export interface RbacRule {
  readonly apiGroups: readonly string[];
  readonly resources: readonly string[];
  readonly verbs: readonly string[];
  readonly resourceNames?: readonly string[];
}

/** A rule and where it applies: everywhere (ClusterRoleBinding) or in one namespace (RoleBinding). */
export interface Grant {
  readonly rule: RbacRule;
  /** Namespace of the RoleBinding; undefined for a ClusterRoleBinding. */
  readonly namespace?: string;
  /** `ClusterRole/name` or `Role/namespace/name`, for messages. */
  readonly source: string;
}

/** A resource request's authorization attributes (the emulator's `AuditEntry` has them all). */
export interface AccessRequest {
  readonly verb: string;
  readonly apiGroup: string;
  readonly resource: string;
  readonly subresource: string;
  readonly namespace: string;
  readonly name: string;
}

/** A ServiceAccount, as a binding's subject names it. */
export interface Subject {
  readonly namespace: string;
  readonly name: string;
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
}

function toRule(value: unknown): RbacRule {
  const r = isRecord(value) ? value : {};
  const names = strings(r.resourceNames);
  return {
    apiGroups: strings(r.apiGroups),
    resources: strings(r.resources),
    verbs: strings(r.verbs),
    ...(names.length ? { resourceNames: names } : {}),
  };
}

function meta(doc: Record<string, unknown>): { name: string; namespace: string } {
  const m = isRecord(doc.metadata) ? doc.metadata : {};
  return { name: String(m.name ?? ""), namespace: String(m.namespace ?? "") };
}

function bindsSubject(binding: Record<string, unknown>, subject: Subject): boolean {
  const subjects = Array.isArray(binding.subjects) ? binding.subjects : [];
  return subjects.some((s) =>
    isRecord(s) && s.kind === "ServiceAccount" && s.name === subject.name && s.namespace === subject.namespace
  );
}

/** The rules `subject` holds through the bindings among `docs` (parsed manifests), with their scope. */
export function grantsFor(docs: readonly unknown[], subject: Subject): Grant[] {
  const objects = docs.filter(isRecord);
  const role = (kind: string, name: string, namespace: string) =>
    objects.find((d) =>
      d.kind === kind && meta(d).name === name && (kind === "ClusterRole" || meta(d).namespace === namespace)
    );
  const grants: Grant[] = [];
  for (const binding of objects) {
    if (binding.kind !== "ClusterRoleBinding" && binding.kind !== "RoleBinding") continue;
    if (!bindsSubject(binding, subject)) continue;
    const ref = isRecord(binding.roleRef) ? binding.roleRef : {};
    const scope = binding.kind === "RoleBinding" ? meta(binding).namespace : undefined;
    const target = role(String(ref.kind), String(ref.name), scope ?? "");
    if (!target) throw new TypeError(`${binding.kind} ${meta(binding).name} refers to a missing ${ref.kind}`);
    const source = ref.kind === "Role" ? `Role/${scope}/${ref.name}` : `ClusterRole/${ref.name}`;
    const rules = Array.isArray(target.rules) ? target.rules : [];
    for (const rule of rules) grants.push({ rule: toRule(rule), namespace: scope, source });
  }
  return grants;
}

function resourceOf(req: AccessRequest): string {
  return req.subresource ? `${req.resource}/${req.subresource}` : req.resource;
}

/** Whether one rule allows `req` as the RBAC authorizer decides it. */
export function ruleAllows(rule: RbacRule, req: AccessRequest): boolean {
  const has = (list: readonly string[], value: string) => list.includes("*") || list.includes(value);
  if (!has(rule.verbs, req.verb) || !has(rule.apiGroups, req.apiGroup)) return false;
  if (!has(rule.resources, resourceOf(req))) return false;
  // resourceNames never match a create (no name yet) or an unnamed list or watch.
  return !rule.resourceNames?.length || (req.name !== "" && rule.resourceNames.includes(req.name));
}

/** Whether any grant allows `req`. */
export function isAllowed(grants: readonly Grant[], req: AccessRequest): boolean {
  return grants.some((g) =>
    (g.namespace === undefined || g.namespace === req.namespace) && ruleAllows(g.rule, req)
  );
}

/** One grant split into single (group, resource, verb) permissions, each described for messages. */
function atoms(grant: Grant): { text: string; rule: RbacRule }[] {
  const out: { text: string; rule: RbacRule }[] = [];
  const { apiGroups, resources, verbs, resourceNames } = grant.rule;
  for (const apiGroup of apiGroups) {
    for (const resource of resources) {
      for (const verb of verbs) {
        const names = resourceNames?.length ? ` [${resourceNames.join(", ")}]` : "";
        const where = grant.namespace === undefined ? "cluster-wide" : `in ${grant.namespace}`;
        out.push({
          text: `${verb} ${apiGroup || "core"}/${resource}${names} ${where} (${grant.source})`,
          rule: { apiGroups: [apiGroup], resources: [resource], verbs: [verb], resourceNames },
        });
      }
    }
  }
  return out;
}

/** Permissions the grants give that none of `requests` used (each verb of each resource of each rule). */
export function unusedGrants(grants: readonly Grant[], requests: readonly AccessRequest[]): string[] {
  return grants.flatMap((g) =>
    atoms(g).filter((a) =>
      !requests.some((r) =>
        (g.namespace === undefined || g.namespace === r.namespace) && ruleAllows(a.rule, r)
      )
    ).map((a) => a.text)
  );
}

/** The least rules for `requests`: the CCM's own namespace gets a Role, everything else a ClusterRole. */
export interface DerivedRules {
  readonly cluster: RbacRule[];
  readonly namespace: RbacRule[];
}

/**
 * Rules that allow exactly the verbs each resource was used with. Requests only ever made in `ownNamespace`
 * (the Lease) go into its Role, with `resourceNames` for every verb whose requests all named their object:
 * get, update, patch, delete, and list or watch narrowed by `fieldSelector=metadata.name` (which RBAC
 * authorizes by name too). create and deletecollection never can be.
 */
export function deriveRules(requests: readonly AccessRequest[], ownNamespace: string): DerivedRules {
  const byResource = new Map<string, AccessRequest[]>();
  for (const r of requests) {
    const key = JSON.stringify([r.apiGroup, resourceOf(r)]);
    byResource.set(key, [...(byResource.get(key) ?? []), r]);
  }
  const cluster: RbacRule[] = [];
  const namespace: RbacRule[] = [];
  for (const [key, reqs] of [...byResource].sort(([a], [b]) => a.localeCompare(b))) {
    const [apiGroup = "", resource = ""] = JSON.parse(key) as string[];
    const verbs = (list: readonly AccessRequest[]) => [...new Set(list.map((r) => r.verb))].sort();
    if (!reqs.every((r) => r.namespace === ownNamespace)) {
      cluster.push({ apiGroups: [apiGroup], resources: [resource], verbs: verbs(reqs) });
      continue;
    }
    const unnamedVerbs = new Set(
      reqs.filter((r) => NEVER_NAMED.has(r.verb) || r.name === "").map((r) => r.verb),
    );
    const unnamed = reqs.filter((r) => unnamedVerbs.has(r.verb));
    const named = reqs.filter((r) => !unnamedVerbs.has(r.verb));
    if (unnamed.length) {
      namespace.push({ apiGroups: [apiGroup], resources: [resource], verbs: verbs(unnamed) });
    }
    if (named.length) {
      const resourceNames = [...new Set(named.map((r) => r.name))].sort();
      namespace.push({ apiGroups: [apiGroup], resources: [resource], verbs: verbs(named), resourceNames });
    }
  }
  return { cluster, namespace };
}

/** Verbs RBAC cannot restrict by name: create (no name yet) and deletecollection. */
const NEVER_NAMED: ReadonlySet<string> = new Set(["create", "deletecollection"]);

/** Renders rules as the YAML list items of a `rules:` block, indented by `indent` spaces. */
export function renderRules(rules: readonly RbacRule[], indent = 2): string {
  const pad = " ".repeat(indent);
  const list = (items: readonly string[]) => `[${items.map((i) => (i === "" ? '""' : i)).join(", ")}]`;
  return rules.map((r) =>
    [
      `${pad}- apiGroups: ${list(r.apiGroups)}`,
      `${pad}  resources: ${list(r.resources)}`,
      ...(r.resourceNames?.length ? [`${pad}  resourceNames: ${list(r.resourceNames)}`] : []),
      `${pad}  verbs: ${list(r.verbs)}`,
    ].join("\n")
  ).join("\n") + "\n";
}

/** Replaces the `# rules:<block> begin` … `# rules:<block> end` lines of a manifest with `rules`. */
export function replaceRuleBlock(
  text: string,
  block: "cluster" | "namespace",
  rules: readonly RbacRule[],
): string {
  const m = new RegExp(`^( *)# rules:${block} begin\\n[\\s\\S]*?^ *# rules:${block} end$`, "m").exec(text);
  if (!m) throw new TypeError(`the manifest has no "# rules:${block} begin/end" markers`);
  const pad = m[1] ?? "";
  const body = `${pad}# rules:${block} begin\n${renderRules(rules, pad.length)}${pad}# rules:${block} end`;
  return text.slice(0, m.index) + body + text.slice(m.index + m[0].length);
}
