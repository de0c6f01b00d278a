/**
 * Minimal structural checks of the bodies the client accepts, per route: a 200 whose body is an HTML page (a
 * proxy's) or JSON of another shape must never pass for the object asked for, and never reach a cache. Only
 * the fields the CCM reads to identify and match objects are checked; the rest stays api-v4's typing.
 */
import { isRecord } from "./errors.ts";

/** Says what is wrong with a body, or undefined when it has the expected shape. */
type ShapeCheck = (body: unknown) => string | undefined;

function fields(what: string, want: Record<string, "number" | "string" | "array" | "object">): ShapeCheck {
  return (body) => {
    if (!isRecord(body) || Array.isArray(body)) return `the body is not ${what}`;
    for (const [name, type] of Object.entries(want)) {
      const value = body[name];
      const ok = type === "array"
        ? Array.isArray(value)
        : type === "object"
        ? isRecord(value)
        : type === "number"
        ? typeof value === "number"
        : typeof value === "string";
      if (!ok) return `the body is not ${what} (${name} is not a ${type})`;
    }
    return undefined;
  };
}

const NODEBALANCER = fields("a NodeBalancer", { id: "number", label: "string", region: "string" });
const NB_CONFIG = fields("a NodeBalancer config", { id: "number", port: "number", protocol: "string" });
const NB_NODE = fields("a NodeBalancer node", { id: "number", address: "string" });
const FIREWALL = fields("a firewall", { id: "number", label: "string", status: "string" });
const FIREWALL_DEVICE = fields("a firewall device", { id: "number", entity: "object" });
const FIREWALL_RULES = fields("firewall rules", { inbound_policy: "string", outbound_policy: "string" });
const INSTANCE = fields("a Linode", { id: "number", label: "string", region: "string", ipv4: "array" });
const INSTANCE_CONFIG = fields("a configuration profile", { id: "number", interfaces: "array" });
const CONFIG_INTERFACE = fields("a configuration profile interface", { id: "number", purpose: "string" });
const LINODE_INTERFACE = fields("a Linode interface", { id: "number" });
const LINODE_INTERFACES = fields("a list of Linode interfaces", { interfaces: "array" });
const VPC = fields("a VPC", { id: "number", label: "string", subnets: "array" });
const VPC_IP = fields("a VPC address", { vpc_id: "number", subnet_id: "number" });
const PROFILE = fields("a profile", { username: "string" });
/** DELETE answers `{}`: anything but an object (an HTML page) is wrong. */
const EMPTY = fields("an API answer", {});

/** Per `METHOD route`: the check of a single-object answer, or of each item of a paged list. */
const SHAPES: Record<string, ShapeCheck> = {
  "GET /profile": PROFILE,
  "GET /nodebalancers": NODEBALANCER,
  "GET /nodebalancers/{id}": NODEBALANCER,
  "POST /nodebalancers": NODEBALANCER,
  "PUT /nodebalancers/{id}": NODEBALANCER,
  "GET /nodebalancers/{id}/configs": NB_CONFIG,
  "POST /nodebalancers/{id}/configs": NB_CONFIG,
  "POST /nodebalancers/{id}/configs/{id}/rebuild": NB_CONFIG,
  "GET /nodebalancers/{id}/configs/{id}/nodes": NB_NODE,
  "POST /nodebalancers/{id}/configs/{id}/nodes": NB_NODE,
  "PUT /nodebalancers/{id}/configs/{id}/nodes/{id}": NB_NODE,
  "GET /nodebalancers/{id}/firewalls": FIREWALL,
  "GET /networking/firewalls": FIREWALL,
  "GET /networking/firewalls/{id}": FIREWALL,
  "POST /networking/firewalls": FIREWALL,
  "PUT /networking/firewalls/{id}": FIREWALL,
  "GET /networking/firewalls/{id}/rules": FIREWALL_RULES,
  "PUT /networking/firewalls/{id}/rules": FIREWALL_RULES,
  "GET /networking/firewalls/{id}/devices": FIREWALL_DEVICE,
  "POST /networking/firewalls/{id}/devices": FIREWALL_DEVICE,
  "GET /linode/instances": INSTANCE,
  "GET /linode/instances/{id}": INSTANCE,
  "GET /linode/instances/{id}/configs": INSTANCE_CONFIG,
  "PUT /linode/instances/{id}/configs/{id}/interfaces/{id}": CONFIG_INTERFACE,
  "GET /linode/instances/{id}/interfaces": LINODE_INTERFACES,
  "GET /linode/instances/{id}/interfaces/{id}": LINODE_INTERFACE,
  "PUT /linode/instances/{id}/interfaces/{id}": LINODE_INTERFACE,
  "GET /vpcs": VPC,
  "GET /vpcs/{id}": VPC,
  "GET /vpcs/{id}/ips": VPC_IP,
  "GET /vpcs/ips": VPC_IP,
};

/** What is wrong with the answer of `METHOD route` (a page of a list when `paged`), or undefined. */
export function shapeProblem(
  method: string,
  route: string,
  body: unknown,
  paged: boolean,
): string | undefined {
  const check = SHAPES[`${method} ${route}`] ?? EMPTY;
  if (!paged) return check(body);
  if (!isRecord(body) || !Array.isArray(body.data)) return "the body is not a page of a list";
  for (const item of body.data) {
    const problem = check(item);
    if (problem) return problem.replace("the body is", "an item is");
  }
  return undefined;
}
