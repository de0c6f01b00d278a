/** Per-resource validation (422 Invalid) and defaulting, the subset of upstream's strategies a CCM meets. */
import { isRecord, type KubeObject, type ResourceDef } from "./resources.ts";
import { badRequest, fieldError, invalid, type StatusCause } from "./status.ts";
import { prepareService } from "./service_alloc.ts";
import { immutableCauses, INSTALL_KIND_CAUSES, rbacNameCauses } from "./validate_rbac.ts";
import {
  normalizePodCidrs,
  podCidrCauses,
  podCidrUpdateCauses,
  providerIdUpdateCauses,
} from "./node_spec.ts";

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_1035 = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const LABEL_NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const TAINT_EFFECTS = ["NoSchedule", "PreferNoSchedule", "NoExecute"];

function nameCauses(def: ResourceDef, name: string): StatusCause[] {
  if (def.group === "rbac.authorization.k8s.io") return rbacNameCauses(name);
  const [pattern, max, what] = def.kind === "Namespace"
    ? [DNS_LABEL, 63, "a lowercase RFC 1123 label"]
    : def.kind === "Service"
    ? [DNS_1035, 63, "a DNS-1035 label"]
    : [DNS_SUBDOMAIN, 253, "a lowercase RFC 1123 subdomain"];
  if (pattern.test(name) && name.length <= max) return [];
  return [fieldError("metadata.name", "Invalid", `must be ${what}`, name)];
}

function labelCauses(labels: unknown): StatusCause[] {
  if (labels === undefined) return [];
  if (!isRecord(labels)) return [fieldError("metadata.labels", "Invalid", "must be a map of strings")];
  const causes: StatusCause[] = [];
  for (const [key, value] of Object.entries(labels)) {
    const [prefix, name] = key.includes("/") ? key.split("/", 2) as [string, string] : ["", key];
    if ((prefix !== "" && !DNS_SUBDOMAIN.test(prefix)) || !LABEL_NAME.test(name) || name.length > 63) {
      causes.push(
        fieldError("metadata.labels", "Invalid", "name part must consist of alphanumeric characters", key),
      );
    }
    if (typeof value !== "string" || value.length > 63 || (value !== "" && !LABEL_NAME.test(value))) {
      causes.push(
        fieldError(`metadata.labels`, "Invalid", "a valid label must be 63 characters or less", value),
      );
    }
  }
  return causes;
}

function nodeCauses(obj: KubeObject): StatusCause[] {
  const spec = isRecord(obj.spec) ? obj.spec : {};
  const taints = Array.isArray(spec.taints) ? spec.taints : [];
  const causes: StatusCause[] = [];
  taints.forEach((t, i) => {
    if (!isRecord(t) || typeof t.key !== "string" || t.key === "") {
      causes.push(fieldError(`spec.taints[${i}].key`, "Required"));
    } else if (!TAINT_EFFECTS.includes(String(t.effect))) {
      causes.push(fieldError(`spec.taints[${i}].effect`, "NotSupported", undefined, t.effect));
    }
  });
  return [...causes, ...podCidrCauses(obj)];
}

function eventCauses(obj: KubeObject): StatusCause[] {
  const involved = isRecord(obj.involvedObject) ? obj.involvedObject : {};
  const ns = typeof involved.namespace === "string" ? involved.namespace : "";
  const own = obj.metadata.namespace ?? "";
  // Upstream: an event about a cluster-scoped object lives in "default"; otherwise namespaces must match.
  if (ns === "" ? own !== "default" && own !== "" : ns !== own) {
    return [fieldError("involvedObject.namespace", "Invalid", "does not match event.namespace", ns)];
  }
  return [];
}

function leaseCauses(obj: KubeObject): StatusCause[] {
  const spec = isRecord(obj.spec) ? obj.spec : {};
  const d = spec.leaseDurationSeconds;
  if (d !== undefined && (typeof d !== "number" || d <= 0)) {
    return [fieldError("spec.leaseDurationSeconds", "Invalid", "must be greater than 0", d)];
  }
  return [];
}

/** The apiserver's rule for `kubernetes.io/tls` Secrets: both keys present (their content is not checked). */
function secretCauses(obj: KubeObject): StatusCause[] {
  if (obj.type !== "kubernetes.io/tls") return [];
  const data = isRecord(obj.data) ? obj.data : {};
  return ["tls.crt", "tls.key"].filter((k) => !Object.hasOwn(data, k)).map((k) =>
    fieldError(`data[${k}]`, "Required")
  );
}

const KIND_CAUSES: Record<string, (obj: KubeObject) => StatusCause[]> = {
  Node: nodeCauses,
  Lease: leaseCauses,
  Secret: secretCauses,
  ...INSTALL_KIND_CAUSES,
};

/** Validates an object about to be written; throws 422 Invalid listing every problem. */
export function validateObject(def: ResourceDef, obj: KubeObject): void {
  const name = obj.metadata.name ?? "";
  const causes = [...nameCauses(def, name), ...labelCauses(obj.metadata.labels)];
  if (obj.metadata.annotations !== undefined && !isRecord(obj.metadata.annotations)) {
    causes.push(fieldError("metadata.annotations", "Invalid", "must be a map of strings"));
  }
  causes.push(...(KIND_CAUSES[def.kind]?.(obj) ?? []));
  if (def.key === "events") causes.push(...eventCauses(obj));
  if (causes.length > 0) throw invalid(def, name, causes);
}

function encodeStringData(obj: KubeObject): void {
  const stringData = obj.stringData;
  delete obj.stringData;
  const data: Record<string, unknown> = isRecord(obj.data) ? { ...obj.data } : {};
  for (const [k, v] of Object.entries(data)) {
    if (typeof v !== "string" || !/^[A-Za-z0-9+/]*={0,2}$/.test(v)) {
      throw badRequest(
        `Secret in version "v1" cannot be handled as a Secret: illegal base64 data at key ${k}`,
      );
    }
  }
  if (isRecord(stringData)) {
    for (const [k, v] of Object.entries(stringData)) {
      const bytes = new TextEncoder().encode(String(v));
      data[k] = btoa(Array.from(bytes, (b) => String.fromCharCode(b)).join(""));
    }
  }
  if (Object.keys(data).length > 0 || obj.data !== undefined) obj.data = data;
  if (obj.type === undefined) obj.type = "Opaque";
}

/** What defaulting may need from the store (service IP and port allocation). */
export interface DefaultingContext {
  services(): Iterable<KubeObject>;
}

/** Applies upstream defaults on create and on update (`old` set), mutating `obj` in place. */
export function applyDefaults(
  def: ResourceDef,
  obj: KubeObject,
  old: KubeObject | undefined,
  ctx: DefaultingContext,
): void {
  switch (def.key) {
    case "nodes":
      normalizePodCidrs(obj);
      break;
    case "secrets":
      encodeStringData(obj);
      break;
    case "namespaces":
      if (!old) {
        obj.spec = isRecord(obj.spec) ? obj.spec : { finalizers: ["kubernetes"] };
        obj.status = { phase: "Active" };
      }
      break;
    case "services":
      if (!old) obj.status = { loadBalancer: {} };
      prepareService(def, obj, old, ctx.services());
      break;
    case "pods":
      if (!old) obj.status = { phase: "Pending" };
      break;
    case "apps/daemonsets":
      // Nothing schedules Pods here: the status a controller would fill in stays at zero.
      if (!old) {
        obj.status = {
          currentNumberScheduled: 0,
          numberMisscheduled: 0,
          desiredNumberScheduled: 0,
          numberReady: 0,
        };
      }
      break;
  }
}

/** Update rules that compare the defaulted object with the stored one (a Node's pod CIDRs and providerID never change once set). */
export function validateUpdate(def: ResourceDef, next: KubeObject, old: KubeObject): void {
  const causes = def.kind === "Node"
    ? [...podCidrUpdateCauses(next, old), ...providerIdUpdateCauses(next, old)]
    : [];
  if (causes.length > 0) throw invalid(def, next.metadata.name ?? "", causes);
}

/** Upstream forbids new finalizers on an object that is being deleted, and changes to immutable fields. */
export function checkFinalizersWhileDeleting(def: ResourceDef, obj: KubeObject, old: KubeObject): void {
  const immutable = immutableCauses(def.kind, obj, old);
  if (immutable.length > 0) throw invalid(def, obj.metadata.name ?? "", immutable);
  if (!old.metadata.deletionTimestamp) return;
  const before = new Set(old.metadata.finalizers ?? []);
  const added = (obj.metadata.finalizers ?? []).filter((f) => !before.has(f));
  if (added.length > 0) {
    throw invalid(def, obj.metadata.name ?? "", [
      fieldError(
        "metadata.finalizers",
        "Forbidden",
        "no new finalizers can be added if the object is being deleted",
      ),
    ]);
  }
}
