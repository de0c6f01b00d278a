/**
 * The desired state of a Service's NodeBalancer (`planNodeBalancer`'s result), in the API's field names so
 * request bodies follow directly. A TLS private key is held in `SecretPem`, which prints and serialises as
 * `<REDACTED>`, so logging a plan or an action cannot leak it. Types and that one class.
 */
import type { Algorithm, NodeBalancerProxyProtocol, Protocol, Stickiness } from "@linode/api-v4";
import type {
  CheckType,
  KeptConfigField,
  KeptNodeBalancerField,
  NodeBalancerType,
  PortFamily,
} from "../annotations/spec.ts";
import type { DesiredFirewall } from "../firewall/rules.ts";

const REDACTED = "<REDACTED>";

/** Key material that only `reveal()` gives out; `JSON.stringify`, `Deno.inspect` and `String()` redact it. */
export class SecretPem {
  readonly #text: string;

  constructor(text: string) {
    this.#text = text;
  }

  /** The PEM text, for a request body and nothing else. */
  reveal(): string {
    return this.#text;
  }

  /** True when both hold the same text. */
  equals(other: SecretPem): boolean {
    return this.#text === other.#text;
  }

  /** `<REDACTED>`: a body must go through `revealConfigBody` to carry the key. */
  toJSON(): string {
    return REDACTED;
  }

  /** `<REDACTED>`. */
  toString(): string {
    return REDACTED;
  }

  [Symbol.for("Deno.customInspect")](): string {
    return REDACTED;
  }

  [Symbol.for("nodejs.util.inspect.custom")](): string {
    return REDACTED;
  }
}

/** A backend node of one config. */
export interface DesiredNode {
  /** `ip:nodePort` (`[ip]:nodePort` for IPv6). */
  readonly address: string;
  readonly label: string;
  readonly weight: number;
  /** `accept`; absent for udp, whose nodes have no mode. */
  readonly mode?: "accept";
  /** The backend VPC subnet, with VPC backends. */
  readonly subnet_id?: number;
  /** The Node it stands for. */
  readonly nodeName: string;
}

/** The certificate and key of an https config, from a `kubernetes.io/tls` Secret. */
export interface DesiredTls {
  readonly secretName: string;
  /** The certificate chain (public). */
  readonly ssl_cert: string;
  readonly ssl_key: SecretPem;
  /** The certificate's SHA-256 fingerprint as the API reports `ssl_fingerprint`, when the caller knows it. */
  readonly fingerprint: string | null;
}

/** One config (Service port) of the NodeBalancer. */
export interface DesiredConfig {
  readonly port: number;
  readonly family: PortFamily;
  readonly protocol: Protocol;
  readonly proxy_protocol: NodeBalancerProxyProtocol;
  readonly algorithm: Algorithm;
  /** `null`: not managed (tcp). */
  readonly stickiness: Stickiness | null;
  readonly check: CheckType;
  readonly check_interval: number;
  readonly check_timeout: number;
  readonly check_attempts: number;
  readonly check_passive: boolean;
  /** `null`: not managed (checks other than http and http_body). */
  readonly check_path: string | null;
  /** `null`: not managed (checks other than http_body). */
  readonly check_body: string | null;
  /** `null`: not managed (tcp). */
  readonly udp_check_port: number | null;
  readonly tls: DesiredTls | null;
  readonly nodes: readonly DesiredNode[];
  /** Fields an existing config keeps: their annotation was read leniently (a new config takes the value above). */
  readonly keep?: readonly KeptConfigField[];
}

/** A VPC attachment of a new NodeBalancer (`vpcs` on create). */
export interface DesiredVpc {
  readonly subnet_id: number;
  readonly ipv4_range: string | null;
  readonly ipv6_range: string | null;
  readonly ipv4_range_auto_assign: boolean;
}

/** What the Service's NodeBalancer should be. Label, type, ipv4 and VPCs apply when it is created. */
export interface DesiredNodeBalancer {
  readonly label: string;
  readonly region: string;
  readonly type: NodeBalancerType;
  readonly tags: readonly string[];
  readonly client_conn_throttle: number;
  /** `reserved-ipv4`. */
  readonly ipv4: string | null;
  readonly backendVpc: DesiredVpc | null;
  readonly frontendVpc: DesiredVpc | null;
  readonly firewall: DesiredFirewall;
  readonly configs: readonly DesiredConfig[];
  /** Fields an existing NodeBalancer keeps: their annotation was read leniently (a new one takes the value above). */
  readonly keep?: readonly KeptNodeBalancerField[];
}
