/**
 * A Node's IPv6 pod CIDR, carved from the IPv6 range of its Linode's VPC interface as the Go CCM's cloud
 * allocator does: with the default `/112`, the stable sub-prefix `<first 64 bits>:0:c::/112`; with another
 * size, the range's address masked to that size. Pure.
 */
import { type Cidr6, cidr6Within, cidrAddress6, formatCidr6, mask6, parseCidr6 } from "../../common/ipv6.ts";

/** The mask size the Go CCM derives its stable sub-prefix for. */
export const STABLE_PREFIX = 112;

/** The pod CIDR, or why there is none. */
export type Ipv6PodCidr = { cidr: string } | { error: string };

/**
 * The IPv6 pod CIDR of a Node whose VPC interface holds `range` (`2600:3c05:0:1001::/64`), of size
 * `/maskSize`. Unlike the Go CCM, a size larger than the range itself is refused: it would route addresses of
 * other Linodes to this Node.
 */
export function ipv6PodCidr(range: string, maskSize: number): Ipv6PodCidr {
  const base = parseCidr6(range);
  const address = cidrAddress6(range);
  if (!base || address === undefined) {
    return { error: `the interface's IPv6 range "${range}" is not an IPv6 CIDR` };
  }
  if (maskSize === STABLE_PREFIX) {
    // Hextets 5..7 (1-based) set to 0, c, 0 inside the range's first 64 bits.
    const pod: Cidr6 = { base: ((address & mask6(64)) | (0xcn << 32n)) & mask6(maskSize), prefix: maskSize };
    if (!cidr6Within(pod, base)) {
      return {
        error: `the stable IPv6 pod CIDR ${formatCidr6(pod)} is outside the interface's range ${range}`,
      };
    }
    return { cidr: formatCidr6(pod) };
  }
  const pod: Cidr6 = { base: address & mask6(maskSize), prefix: maskSize };
  if (!cidr6Within(pod, base)) {
    return { error: `a /${maskSize} pod CIDR is larger than the interface's IPv6 range ${range}` };
  }
  return { cidr: formatCidr6(pod) };
}
