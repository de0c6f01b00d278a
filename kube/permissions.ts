/**
 * Missing RBAC permissions, said loudly: when the apiserver refuses a request for want of a permission (403
 * with upstream's RBAC wording), the request's attributes become a `KubeForbiddenError` (permanent: retrying
 * cannot help until someone changes the ClusterRole) and `MissingPermissions` reports it. Every refusal counts
 * in `ccm_kube_forbidden_total{verb,resource}`; the first of each (verb, resource) gets an `error` log line and a
 * Warning Event `MissingPermission` naming the rule to add, on the Service or Node being reconciled, else on the
 * `kube-system` Namespace. It is said again only after a request of that (verb, resource) succeeded in between.
 * Neither the Event nor the log carries more than the apiserver's own message: names, never a Secret's data.
 */
import { type Logger, redactSecrets } from "../common/log.ts";
import type { Counter, Registry } from "../common/metrics.ts";
import type { EventSink, ObjectRef } from "./events.ts";
import {
  KubeApiError,
  type PermissionObserver,
  type RequestAttributes,
  requestAttributes,
} from "./requests.ts";

/** The reason of every `MissingPermission` Event (this project's own; the Go CCM has no such Event). */
export const MISSING_PERMISSION_REASON = "MissingPermission";

/** Where an Event goes when no Service or Node is being reconciled: the cluster's `kube-system` Namespace. */
const CLUSTER_REF: ObjectRef = { kind: "Namespace", apiVersion: "v1", name: "kube-system" };

/** `resource[.group][/subresource]`: `namespaces`, `nodes/status`, `tokenreviews.authentication.k8s.io`. */
export function qualifiedResource(a: Pick<RequestAttributes, "group" | "resource" | "subresource">): string {
  const base = a.group ? `${a.resource}.${a.group}` : a.resource;
  return a.subresource ? `${base}/${a.subresource}` : base;
}

/** The ClusterRole rule that grants `a`, in the flow style of `kubectl get clusterrole -o yaml`. */
export function ruleFor(a: RequestAttributes): string {
  const resource = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  return `{apiGroups: ["${a.group}"], resources: ["${resource}"], verbs: ["${a.verb}"]}`;
}

/** True when a Status message is the authorizer's (`User "x" cannot get resource ...`), not an admission denial. */
export function isRbacDenial(message: string): boolean {
  return / cannot \S+ resource "[^"]*" in API group "[^"]*"/.test(message);
}

/** A request the apiserver refused for want of an RBAC permission: retrying cannot help until RBAC changes. */
export class KubeForbiddenError extends KubeApiError {
  override name = "KubeForbiddenError";
  /** The work queue does not retry the key until its object changes (or a resync comes). */
  readonly permanent = true;
  constructor(readonly permission: RequestAttributes, message: string) {
    super(403, "Forbidden", message);
  }
}

/** Options of `MissingPermissions`. */
export interface MissingPermissionsOptions {
  log: Logger;
  metrics: Registry;
}

/** What `MissingPermissions` learns once the parts that record Events exist. */
export interface PermissionOutputs {
  /** Records the Warning Events (the recorder's `cloud-controller-manager` sink). */
  events: EventSink;
  /** The object being reconciled by the calling code, if any (a Service or a Node). */
  subject?: () => ObjectRef | undefined;
  /** Secrets to keep out of the Event and log text. */
  secrets?: () => readonly string[];
}

/** Counts every RBAC refusal and reports each missing (verb, resource) once until it is granted. */
export class MissingPermissions implements PermissionObserver {
  readonly #log: Logger;
  readonly #counter: Counter;
  readonly #reported = new Set<string>();
  #outputs: PermissionOutputs | undefined;

  constructor(options: MissingPermissionsOptions) {
    this.#log = options.log;
    this.#counter = options.metrics.counter(
      "ccm_kube_forbidden_total",
      "Kubernetes API requests refused for want of an RBAC permission, by verb and resource",
      ["verb", "resource"],
    );
  }

  /** Where Events go and what they are about; until called, refusals are only counted and logged. */
  attach(outputs: PermissionOutputs): void {
    this.#outputs = outputs;
  }

  /**
   * A 403 to `method url`: a `KubeForbiddenError` when RBAC refused it (the Status message in the authorizer's
   * words, or no message: a watch), counted and reported; undefined for any other refusal.
   */
  denied(method: string, url: string, apiMessage?: string): KubeForbiddenError | undefined {
    if (apiMessage !== undefined && !isRbacDenial(apiMessage)) return undefined;
    const permission = requestAttributes(method, url);
    const resource = qualifiedResource(permission);
    this.#counter.inc({ verb: permission.verb, resource });
    const text = apiMessage || `${resource} is forbidden: cannot ${permission.verb}`;
    const error = new KubeForbiddenError(permission, `Kubernetes API returned HTTP 403 Forbidden: ${text}`);
    const key = `${permission.verb} ${resource}`;
    if (!this.#reported.has(key)) {
      this.#reported.add(key);
      this.#report(permission, text);
    }
    return error;
  }

  /** A success of `method url`: its (verb, resource) is granted now, so a later refusal is reported again. */
  allowed(method: string, url: string): void {
    if (this.#reported.size === 0) return;
    const permission = requestAttributes(method, url);
    const resource = qualifiedResource(permission);
    if (this.#reported.delete(`${permission.verb} ${resource}`)) {
      this.#log.info("permission {verb} on {resource} is granted now", { verb: permission.verb, resource });
    }
  }

  #report(p: RequestAttributes, apiMessage: string): void {
    const resource = p.subresource ? `${p.resource}/${p.subresource}` : p.resource;
    // A Namespace is its own namespace to the authorizer, but the object is cluster-scoped.
    const scope = p.namespace && p.resource !== "namespaces" ? `in namespace ${p.namespace}` : "cluster-wide";
    const props = {
      verb: p.verb,
      resource,
      group: p.group,
      scope,
      rule: ruleFor(p),
      apiMessage: redactSecrets(apiMessage, this.#outputs?.secrets?.() ?? []),
    };
    this.#log.error(
      "missing RBAC permission: {verb} on {resource} in API group {group} ({scope}) is forbidden; " +
        "add {rule} to the CCM's ClusterRole: {apiMessage}",
      props,
    );
    const message =
      `Missing RBAC permission: ${p.verb} on ${resource} in API group "${p.group}" (${scope}) ` +
      `is forbidden to the CCM; add ${props.rule} to its ClusterRole. The apiserver said: ${props.apiMessage}`;
    const ref = this.#outputs?.subject?.() ?? CLUSTER_REF;
    this.#outputs?.events.event(ref, "Warning", MISSING_PERMISSION_REASON, message);
  }
}
