/**
 * Every Service annotation the service controller reads, as data: the one source for the parser's error
 * texts, a future `lint` subcommand and the README table. Names and defaults follow the Go CCM's README
 * (`throttle` 20, `check-passive` false) and, for annotations it does not list, the Go CCM's current docs.
 */

/** What every Service annotation of the Go CCM starts with. */
export const ANNOTATION_PREFIX = "service.beta.kubernetes.io/linode-loadbalancer-";

/** One annotation: its suffix, what it accepts and what applies without it. */
export interface AnnotationInfo {
  /** The part after `ANNOTATION_PREFIX`, e.g. `check-interval`; `port-<N>` for the per-port JSON. */
  readonly name: string;
  /** What is accepted, as the `expected …` part of an error message. */
  readonly accepted: string;
  /** What applies when the annotation is absent, in words (`""` when nothing does). */
  readonly default: string;
  readonly description: string;
  /** The annotation that replaces a deprecated one. */
  readonly replacedBy?: string;
}

/** Go's `strconv.ParseBool` spellings, the README's bool contract. */
export const BOOL_ACCEPTED = "true or false (also 1, t, T, TRUE, True, 0, f, F, FALSE, False)";

const CIDR4 = "an IPv4 CIDR such as 10.100.0.0/30";
const CIDR6 = "an IPv6 CIDR such as fd00:1::/64";

/** The table, in the order of the Go CCM's docs. */
export const ANNOTATIONS: readonly AnnotationInfo[] = Object.freeze([
  info(
    "throttle",
    "a whole number from 0 to 20 (0 disables)",
    "20",
    "new connections per second per client IP",
  ),
  info(
    "default-protocol",
    "tcp, udp, http or https",
    "the Service port's protocol",
    "protocol of every port",
  ),
  info(
    "default-proxy-protocol",
    "none, v1 or v2 (none for udp ports)",
    "none",
    "Proxy Protocol of every port",
  ),
  info(
    "default-algorithm",
    "roundrobin, leastconn or source (tcp, http, https); roundrobin, leastconn or ring_hash (udp)",
    "roundrobin",
    "balancing algorithm of every port",
  ),
  info(
    "default-stickiness",
    "none, table or http_cookie (http, https); none, session or source_ip (udp)",
    "table (http, https), session (udp); tcp ports have none",
    "session stickiness of every http, https or udp port",
  ),
  info(
    "port-<N>",
    'a JSON object with any of "protocol", "proxy-protocol", "tls-secret-name", "algorithm", "stickiness", ' +
      '"udp-check-port" (string values)',
    "",
    "settings of Service port N, over the default-* annotations",
  ),
  info(
    "check-type",
    "none, connection, http or http_body",
    "none (udp), connection (others)",
    "health check",
  ),
  info("check-path", "a URL path starting with /", "/", "path of http and http_body health checks"),
  info("check-body", "a non-empty regular expression", "", "what an http_body health check must find"),
  info(
    "check-interval",
    "whole seconds from 2 to 3600, more than check-timeout",
    "5",
    "seconds between checks",
  ),
  info(
    "check-timeout",
    "whole seconds from 1 to 30, less than check-interval",
    "3",
    "seconds a check may take",
  ),
  info("check-attempts", "a whole number from 1 to 30", "2", "failed checks before a backend is taken out"),
  info("check-passive", BOOL_ACCEPTED, "false (always false for udp)", "5xx answers fail a backend"),
  info("udp-check-port", "a port from 1 to 65535", "80", "port of the health check of udp ports"),
  info("preserve", BOOL_ACCEPTED, "false", "keep the NodeBalancer when the Service is deleted"),
  info("nodebalancer-id", "a NodeBalancer ID (a positive whole number)", "", "NodeBalancer to use"),
  info(
    "nodebalancer-type",
    "common, premium or premium_40gb",
    "--default-nodebalancer-type",
    "type of a new NodeBalancer",
  ),
  info(
    "hostname-only-ingress",
    BOOL_ACCEPTED,
    "LINODE_HOSTNAME_ONLY_INGRESS",
    "status shows only the hostname",
  ),
  info("tags", "comma-separated tags of 3 to 50 characters each", "", "extra NodeBalancer tags"),
  info("firewall-id", "a Cloud Firewall ID (a positive whole number)", "", "existing firewall to attach"),
  info(
    "firewall-acl",
    'a JSON object with exactly one of "allowList" or "denyList", each {"ipv4": [CIDRs], "ipv6": [CIDRs]}',
    "",
    "a CCM-managed firewall with these rules (ignored when firewall-id is set)",
  ),
  info("enable-ipv6-ingress", BOOL_ACCEPTED, "--enable-ipv6-for-loadbalancers", "status shows IPv6 too"),
  info(
    "enable-ipv6-backends",
    BOOL_ACCEPTED,
    "--enable-ipv6-for-nodebalancer-backends",
    "Nodes' public IPv6 as backends",
  ),
  info("backend-ipv4-range", CIDR4, "", "backend range inside the VPC subnet (new NodeBalancers)"),
  info("backend-vpc-name", "a VPC label", "the first of --vpc-names", "backend VPC (new NodeBalancers)"),
  info("backend-subnet-name", "a subnet label", "the first of --subnet-names", "backend subnet"),
  info("backend-subnet-id", "a subnet ID (a positive whole number)", "", "backend subnet, over the names"),
  info("frontend-subnet-id", "a subnet ID (a positive whole number)", "", "frontend VPC subnet"),
  info("frontend-vpc-name", "a VPC label, with frontend-subnet-name", "", "frontend VPC"),
  info("frontend-subnet-name", "a subnet label, with frontend-vpc-name", "", "frontend subnet"),
  info("frontend-ipv4-range", CIDR4, "", "frontend IPv4 range in the frontend subnet"),
  info("frontend-ipv6-range", CIDR6, "", "frontend IPv6 range in the frontend subnet"),
  info("reserved-ipv4", "a reserved IPv4 address of the account", "", "IPv4 of a new NodeBalancer"),
  info("retain-reserved-ipv4", BOOL_ACCEPTED, "true", "keep the reserved IPv4 when deleting"),
  {
    ...info("proxy-protocol", "none, v1 or v2", "none", "deprecated spelling of default-proxy-protocol"),
    replacedBy: "default-proxy-protocol",
  },
]);

function info(name: string, accepted: string, def: string, description: string): AnnotationInfo {
  return { name, accepted, default: def, description };
}

/** The full annotation name of a suffix: `annotationKey("throttle")`. */
export function annotationKey(name: string): string {
  return ANNOTATION_PREFIX + name;
}

/** The table entry of a suffix (`port-443` finds `port-<N>`); undefined for unknown names. */
export function annotationInfo(name: string): AnnotationInfo | undefined {
  const lookup = /^port-\d+$/.test(name) ? "port-<N>" : name;
  return ANNOTATIONS.find((a) => a.name === lookup);
}

/** What a known annotation accepts (the table's text); throws for a name missing from the table. */
export function acceptedText(name: string): string {
  const found = annotationInfo(name);
  if (!found) throw new RangeError(`Unknown annotation ${name}`);
  return found.accepted;
}
