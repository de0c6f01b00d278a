/**
 * `--allocate-node-cidrs` and its flags as the Go CCM checks them before starting node IPAM: one IPv4
 * `--cluster-cidr`, no larger than the per-Node size, and (upstream's `cidrset` limit) at most 16 bits finer.
 * Pure: pushes one line per problem.
 */
import { cidrFamily } from "../common/net.ts";

/** Upstream's `clusterSubnetMaxDiff`: a cluster CIDR is cut into at most 2^16 Node ranges. */
const MAX_MASK_DIFF = 16;

/** The settings `checkNodeIpam` reads. */
export interface NodeIpamSettings {
  readonly clusterCidrs: readonly string[];
  readonly nodeCidrMaskSizeIpv4: number;
}

/** Pushes what stops node IPAM from starting with these settings (only called with `--allocate-node-cidrs`). */
export function checkNodeIpam(s: NodeIpamSettings, p: string[]): void {
  const [cidr, ...more] = s.clusterCidrs;
  if (cidr === undefined) return; // reported as "needs --cluster-cidr"
  if (more.length > 0) {
    p.push(
      "--cluster-cidr: too many cluster CIDRs for node IPAM (one IPv4 CIDR; IPv6 ranges come from the VPC)",
    );
    return;
  }
  if (cidrFamily(cidr) !== 4) {
    p.push(
      `--cluster-cidr: ${cidr} is not IPv4 (node IPAM allocates IPv4 from it; IPv6 ranges come from the VPC)`,
    );
    return;
  }
  const clusterPrefix = Number(cidr.split("/")[1]);
  const node = s.nodeCidrMaskSizeIpv4;
  if (clusterPrefix > node) {
    p.push(`--node-cidr-mask-size-ipv4: /${node} is larger than the cluster CIDR ${cidr}`);
  } else if (node - clusterPrefix > MAX_MASK_DIFF) {
    p.push(
      `--node-cidr-mask-size-ipv4: /${node} cuts ${cidr} into more than 2^${MAX_MASK_DIFF} ranges ` +
        `(use at most /${clusterPrefix + MAX_MASK_DIFF})`,
    );
  }
}
