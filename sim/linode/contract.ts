/**
 * The request-body contract: every POST/PUT body the emulator receives is checked against Linode's own yup
 * schemas (`@linode/validation`, the ones Cloud Manager and api-v4 use) for its route, and what they refuse is
 * recorded. Those schemas also hold form rules of Cloud Manager that the API does not apply (a node's port as
 * its own field, say); such findings are warnings, each listed in `UI_ONLY` with why. Anything else is a
 * violation: a body Linode's own client would not send.
 */
import {
  CreateFirewallSchema,
  createNodeBalancerConfigSchema,
  FirewallDeviceSchema,
  FirewallRuleSchema,
  ModifyLinodeInterfaceSchema,
  nodeBalancerConfigNodeSchema,
  NodeBalancerSchema,
  UpdateConfigInterfaceSchema,
  UpdateFirewallSchema,
  UpdateNodeBalancerConfigSchema,
  UpdateNodeBalancerSchema,
} from "@linode/validation";

/** What the contract needs of a yup schema. */
interface BodySchema {
  validateSync(value: unknown, options: { abortEarly: boolean }): unknown;
}

/** One refusal of a schema: the route, the body path and the schema's message. */
export interface ContractFinding {
  /** Method and route template without the version prefix: `POST /nodebalancers/{id}/configs`. */
  route: string;
  path: string;
  message: string;
  severity: "violation" | "warning";
  /** Why a warning is one (from `UI_ONLY`). */
  why?: string;
  /** The request's `User-Agent`: tells the CCM's own requests from a test's. */
  userAgent: string;
  /** How many requests gave this same finding. */
  count: number;
}

/** The schema api-v4 applies to each route's body (api-v4 0.158's own choice where it validates at all). */
const SCHEMAS: Readonly<Record<string, BodySchema>> = {
  "POST /nodebalancers": NodeBalancerSchema,
  "PUT /nodebalancers/{id}": UpdateNodeBalancerSchema,
  "POST /nodebalancers/{id}/configs": createNodeBalancerConfigSchema,
  "PUT /nodebalancers/{id}/configs/{id}": UpdateNodeBalancerConfigSchema,
  "POST /nodebalancers/{id}/configs/{id}/rebuild": createNodeBalancerConfigSchema,
  "POST /nodebalancers/{id}/configs/{id}/nodes": nodeBalancerConfigNodeSchema,
  "PUT /nodebalancers/{id}/configs/{id}/nodes/{id}": nodeBalancerConfigNodeSchema,
  "POST /networking/firewalls": CreateFirewallSchema,
  "PUT /networking/firewalls/{id}": UpdateFirewallSchema,
  "PUT /networking/firewalls/{id}/rules": FirewallRuleSchema,
  "POST /networking/firewalls/{id}/devices": FirewallDeviceSchema,
  "PUT /linode/instances/{id}/configs/{id}/interfaces/{id}": UpdateConfigInterfaceSchema,
  "PUT /linode/instances/{id}/interfaces/{id}": ModifyLinodeInterfaceSchema,
};

/** A schema rule that is Cloud Manager's, not the API's: findings it matches are warnings. */
interface UiOnlyRule {
  route: RegExp;
  path: RegExp;
  why: string;
}

const NODE_FORM =
  "Cloud Manager's node form has the IP and the port as fields of their own and checks the bare " +
  "IP; the API takes `address` as ip:port (which the sim checks)";

/** Schema rules the API does not apply as written. */
const UI_ONLY: readonly UiOnlyRule[] = [
  {
    route: /^POST \/nodebalancers(\/\{id\}\/configs(\/\{id\}\/rebuild)?)?$/,
    path: /^(configs\[\d+\]\.)?nodes\[\d+\]\.(port|address)$/,
    why: NODE_FORM,
  },
  {
    route: /^(POST|PUT) \/nodebalancers\/\{id\}\/configs\/\{id\}\/nodes(\/\{id\})?$/,
    path: /^(port|address)$/,
    why: NODE_FORM,
  },
  {
    route: /^PUT \/linode\/instances\/\{id\}\/configs\/\{id\}\/interfaces\/\{id\}$/,
    path: /^ip_ranges$/,
    why:
      "Cloud Manager edits one range per interface (max 1); the reference sets no maximum and its example " +
      "routes two ranges to one interface",
  },
  {
    route: /^PUT \/nodebalancers\/\{id\}\/configs\/\{id\}\/nodes\/\{id\}$/,
    path: /^label$/,
    why:
      "api-v4 checks a node update with its create schema; the reference (v4.208) requires no field of a " +
      "node update, and the API keeps what a partial body leaves out",
  },
  {
    route: /^PUT \/linode\/instances\/\{id\}\/interfaces\/\{id\}$/,
    path: /^vlan\.vlan_label$/,
    why: "yup fills the absent, optional `vlan` object with `{}` and then wants its label; the reference's " +
      "update takes a body without `vlan`",
  },
  {
    route: /^PUT \/linode\/instances\/\{id\}\/interfaces\/\{id\}$/,
    path: /^vpc\.subnet_id$/,
    why:
      "the API does not let an update change subnet_id, and linodego's and the Terraform provider's update " +
      "options leave it out; the sim keeps the interface's subnet when it is absent",
  },
];

/** The route template of a call key (`PUT /v4beta/...` → `PUT /...`). */
function routeOf(key: string): string {
  return key.replace(/^(\S+) \/v4(beta)?(?=\/)/, "$1 ");
}

function errorsOf(e: unknown): { path: string; message: string }[] {
  if (typeof e !== "object" || e === null) return [{ path: "", message: String(e) }];
  const inner = (e as { inner?: unknown }).inner;
  const list = Array.isArray(inner) && inner.length > 0 ? inner : [e];
  return list.map((x) => {
    const item = x as { path?: unknown; message?: unknown };
    return { path: typeof item.path === "string" ? item.path : "", message: String(item.message ?? x) };
  });
}

/** Checks bodies by route and keeps the findings, each distinct one once with a count (bounded memory). */
export class ContractLog {
  readonly #findings = new Map<string, ContractFinding>();

  /** Checks one request body; routes without a schema pass unchecked. */
  check(key: string, body: unknown, userAgent: string): void {
    const route = routeOf(key);
    const schema = SCHEMAS[route];
    if (!schema) return;
    try {
      schema.validateSync(body ?? {}, { abortEarly: false });
    } catch (e) {
      for (const { path, message } of errorsOf(e)) {
        const rule = UI_ONLY.find((r) => r.route.test(route) && r.path.test(path));
        const severity = rule ? "warning" : "violation";
        const key = JSON.stringify([route, path, message, userAgent]);
        const seen = this.#findings.get(key);
        if (seen) seen.count++;
        else {
          const why = rule ? { why: rule.why } : {};
          this.#findings.set(key, { route, path, message, severity, ...why, userAgent, count: 1 });
        }
      }
    }
  }

  /** Every distinct finding so far, in the order first seen. */
  findings(): readonly ContractFinding[] {
    return [...this.#findings.values()].map((f) => ({ ...f }));
  }

  /** Findings that are not known UI-only rules. */
  violations(): ContractFinding[] {
    return this.findings().filter((f) => f.severity === "violation");
  }

  /** Forgets every finding. */
  reset(): void {
    this.#findings.clear();
  }
}
