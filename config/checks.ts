/**
 * Checks of values that later code consumes, so a value it cannot use stops the CCM at start (exit 2) instead
 * of failing when a leader term starts. Each check pushes one line naming the setting, the value and what is
 * accepted. Pure.
 */
import { isIpAddress } from "../common/net.ts";

/**
 * Longest duration a timer may be given. A timer longer than 2^31-1 ms (24.8 days) fires at once in every
 * JavaScript runtime, and an acquire retry sleeps up to 2.2 × `--leader-elect-retry-period`: 240 h keeps
 * every derived timer below that.
 */
export const MAX_TIMER_MS = 240 * 3_600_000;

/** Shortest duration a timer may be given: timers have millisecond resolution. */
export const MIN_TIMER_MS = 1;

/** A Kubernetes namespace name: an RFC 1123 label. */
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** A Kubernetes object name such as a Lease's: an RFC 1123 subdomain. */
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Linode VPC and subnet labels (POST /vpcs refuses anything else). */
const VPC_LABEL = /^[a-zA-Z0-9-]{1,64}$/;

/** Linode region IDs: `us-east`, `nl-ams`, `in-bom-2`. */
const REGION_ID = /^[a-z0-9]+(-[a-z0-9]+)*$/;

/** Pushes a problem unless `text` is a usable timer duration in whole seconds (1 s to 240 h). */
export function checkTimerSeconds(setting: string, text: string, p: string[]): boolean {
  const max = MAX_TIMER_MS / 1000;
  if (/^\+?\d+$/.test(text) && Number(text) > 0 && Number(text) <= max) return true;
  p.push(`${setting}: invalid value "${text}" (use a whole number of seconds from 1 to ${max})`);
  return false;
}

/** Pushes a problem unless `value` is an RFC 1123 label (a namespace name). */
export function checkDnsLabel(setting: string, value: string, p: string[]): void {
  if (value.length <= 63 && DNS_LABEL.test(value)) return;
  p.push(
    `${setting}: invalid namespace "${value}" (use at most 63 lowercase letters, digits and -, ` +
      "starting and ending with a letter or digit)",
  );
}

/** Pushes a problem unless `value` is an RFC 1123 subdomain (an object name). */
export function checkDnsSubdomain(setting: string, value: string, p: string[]): void {
  if (value.length <= 253 && DNS_SUBDOMAIN.test(value)) return;
  p.push(
    `${setting}: invalid name "${value}" (use at most 253 lowercase letters, digits, - and ., ` +
      "each part starting and ending with a letter or digit)",
  );
}

/** Pushes one problem per label that no Linode VPC or subnet can carry. */
export function checkVpcLabels(setting: string, labels: readonly string[], p: string[]): void {
  for (const label of labels) {
    if (!VPC_LABEL.test(label)) {
      p.push(`${setting}: invalid label "${label}" (Linode labels are 1 to 64 ASCII letters, digits and -)`);
    }
  }
}

/** Pushes a problem unless `region` looks like a Linode region ID. */
export function checkRegion(region: string, p: string[]): void {
  if (REGION_ID.test(region)) return;
  p.push(`LINODE_REGION: invalid region "${region}" (use a Linode region ID such as us-east or nl-ams)`);
}

/** `--cluster-cidr` split as upstream splits it: the whole value trimmed, then cut at commas (no blanks). */
export function splitClusterCidrs(text: string): string[] {
  const trimmed = text.trim();
  return trimmed === "" ? [] : trimmed.split(",");
}

/** True for a host name (RFC 1123, any case) or an IP address without brackets. */
function isHost(text: string): boolean {
  return isIpAddress(text) || (text.length <= 253 && DNS_SUBDOMAIN.test(text.toLowerCase()));
}

/** Pushes problems unless the in-cluster API endpoint (`KUBERNETES_SERVICE_HOST`/`PORT`) makes a URL. */
export function checkServiceEndpoint(host: string, port: string, p: string[]): void {
  if (!isHost(host)) {
    p.push(`KUBERNETES_SERVICE_HOST: invalid host "${host}" (use an IP address or a DNS name)`);
  }
  if (!/^\d{1,5}$/.test(port) || Number(port) < 1 || Number(port) > 65535) {
    p.push(`KUBERNETES_SERVICE_PORT: invalid port "${port}" (use 1 to 65535)`);
  }
}

/** Pushes a problem unless `--master` is an http(s) URL with a host and nothing after the path. */
export function checkMasterUrl(master: string, p: string[]): void {
  const accepted = "use https://HOST[:PORT], or http:// for a plain-HTTP apiserver";
  let url: URL;
  try {
    url = new URL(master);
  } catch {
    p.push(`--master: invalid URL "${master}" (${accepted})`);
    return;
  }
  const schemeOk = url.protocol === "https:" || url.protocol === "http:";
  if (!schemeOk || url.hostname === "" || url.search || url.hash || url.username || url.password) {
    p.push(`--master: unusable URL "${url.origin === "null" ? master : url.origin}" (${accepted})`);
  }
}
