/**
 * The VPC annotations: `backend-*` (which subnet a new NodeBalancer's backends live in, with the Go CCM's
 * precedence: backend-subnet-id, the name annotations, --nodebalancer-backend-ipv4-subnet-id/-name, the
 * first of --vpc-names/--subnet-names) and `frontend-*` (a VPC frontend address). Names are resolved to
 * IDs by the caller; this module only chooses. Pure.
 */
import { cidr4Within, parseCidr4 } from "../../../common/net.ts";
import type { VpcConfig } from "../../../config/types.ts";
import type { AnnotationReader } from "./values.ts";
import type { ServiceDefaults } from "./defaults.ts";
import type { BackendVpcSpec, FrontendVpcSpec, SubnetSelector } from "./spec.ts";

const BACKEND_NAMES = ["backend-ipv4-range", "backend-vpc-name", "backend-subnet-name", "backend-subnet-id"];
const FRONTEND_NAMES = [
  "frontend-subnet-id",
  "frontend-vpc-name",
  "frontend-subnet-name",
  "frontend-ipv4-range",
  "frontend-ipv6-range",
];

/** True when the CCM runs with VPCs (`--vpc-names` or `--vpc-ids`). */
export function hasVpc(vpc: Pick<VpcConfig, "names" | "ids">): boolean {
  return vpc.names.length > 0 || vpc.ids.length > 0;
}

/** True when the IPv4 CIDR `inner` lies wholly inside `outer`. */
function ipv4CidrWithin(outer: string, inner: string): boolean {
  const o = parseCidr4(outer);
  const i = parseCidr4(inner);
  return o !== undefined && i !== undefined && cidr4Within(i, o);
}

function backendRange(reader: AnnotationReader, subnet: string | null): string | undefined {
  const range = reader.cidr("backend-ipv4-range", 4);
  if (range === undefined || subnet === null || ipv4CidrWithin(subnet, range)) return range;
  return reader.fail(
    "backend-ipv4-range",
    range,
    `an IPv4 CIDR inside ${subnet} (--nodebalancer-backend-ipv4-subnet)`,
  );
}

function backendSubnet(reader: AnnotationReader, defaults: ServiceDefaults): SubnetSelector | undefined {
  const { services, vpc } = defaults;
  const subnetId = reader.id("backend-subnet-id");
  if (reader.has("backend-subnet-id")) return subnetId === undefined ? undefined : { kind: "id", subnetId };
  const vpcName = reader.text("backend-vpc-name");
  const subnetName = reader.text("backend-subnet-name");
  const byAnnotation = reader.has("backend-vpc-name") || reader.has("backend-subnet-name");
  if (!byAnnotation && services.backendIpv4SubnetId !== null) {
    return { kind: "id", subnetId: services.backendIpv4SubnetId };
  }
  if (!byAnnotation && services.backendIpv4SubnetName !== null && vpc.names[0] !== undefined) {
    return { kind: "names", vpcName: vpc.names[0], subnetName: services.backendIpv4SubnetName };
  }
  if (!byAnnotation && vpc.names.length === 0 && vpc.subnetIds[0] !== undefined) {
    return { kind: "id", subnetId: vpc.subnetIds[0] };
  }
  const v = vpcName ?? vpc.names[0];
  const s = subnetName ?? vpc.subnetNames[0];
  if (v !== undefined && s !== undefined) return { kind: "names", vpcName: v, subnetName: s };
  // Started with --vpc-ids/--subnet-ids: there is no label to pair a single name annotation with.
  const missing = v === undefined ? "backend-vpc-name" : "backend-subnet-name";
  return reader.fail(
    missing,
    reader.raw(missing) ?? "",
    "a label, given with the other backend name annotation",
  );
}

/** The backend VPC of a new NodeBalancer, or null when backends are not VPC addresses. */
export function readBackendVpc(
  reader: AnnotationReader,
  defaults: ServiceDefaults,
  ipv6Backends: boolean,
): BackendVpcSpec | null | undefined {
  const { services, vpc } = defaults;
  if (ipv6Backends || !hasVpc(vpc) || services.disableVpcBackends) {
    for (const name of BACKEND_NAMES.filter((n) => reader.has(n))) {
      reader.warn(name, "ignored: NodeBalancer backends are not VPC addresses here");
    }
    return null;
  }
  const range = backendRange(reader, services.backendIpv4Subnet);
  const subnet = backendSubnet(reader, defaults);
  if (subnet === undefined || (reader.has("backend-ipv4-range") && range === undefined)) return undefined;
  if (range !== undefined) return { subnet, ipv4Range: range, ipv4RangeAutoAssign: false };
  const byAnnotation = reader.has("backend-vpc-name") || reader.has("backend-subnet-name");
  if (!byAnnotation && services.backendIpv4SubnetId === null && services.backendIpv4Subnet !== null) {
    return { subnet, ipv4Range: services.backendIpv4Subnet, ipv4RangeAutoAssign: true };
  }
  return { subnet, ipv4Range: null, ipv4RangeAutoAssign: false };
}

/** The frontend VPC of a new NodeBalancer, or null when no frontend-* annotation is set. */
export function readFrontendVpc(reader: AnnotationReader): FrontendVpcSpec | null | undefined {
  if (!FRONTEND_NAMES.some((n) => reader.has(n))) return null;
  const ipv4 = reader.has("frontend-ipv4-range") ? reader.cidr("frontend-ipv4-range", 4) : null;
  const ipv6 = reader.has("frontend-ipv6-range") ? reader.cidr("frontend-ipv6-range", 6) : null;
  let subnet: SubnetSelector | undefined;
  if (reader.has("frontend-subnet-id")) {
    const subnetId = reader.id("frontend-subnet-id");
    subnet = subnetId === undefined ? undefined : { kind: "id", subnetId };
  } else if (reader.has("frontend-vpc-name") || reader.has("frontend-subnet-name")) {
    const vpcName = requiredText(reader, "frontend-vpc-name");
    const subnetName = requiredText(reader, "frontend-subnet-name");
    subnet = vpcName && subnetName ? { kind: "names", vpcName, subnetName } : undefined;
  } else {
    const needed = "a subnet ID: frontend ranges need frontend-subnet-id or frontend-vpc-name/-subnet-name";
    reader.fail("frontend-subnet-id", "", needed);
  }
  if (subnet === undefined || ipv4 === undefined || ipv6 === undefined) return undefined;
  return { subnet, ipv4Range: ipv4, ipv6Range: ipv6 };
}

function requiredText(reader: AnnotationReader, name: string): string | undefined {
  return reader.has(name) ? reader.text(name) : reader.fail(name, "");
}
