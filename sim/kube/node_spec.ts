/**
 * A Node's `spec.podCIDR`/`spec.podCIDRs` as the apiserver keeps them: the v1 conversion (`podCIDR` wins when
 * both are given and differ; `podCIDRs` is filled from `podCIDR`; `podCIDR` is always `podCIDRs[0]`),
 * `ValidateNode` (valid CIDRs, at most one per IP family, no duplicates) and `ValidateNodeUpdate` (once set,
 * the list may not change: "node updates may not change podCIDR except from \"\" to valid"), and the same rule
 * for `spec.providerID` (set once, by the cloud-node controller, then never changed or cleared).
 * Upstream: `pkg/apis/core/v1/conversion.go`, `pkg/apis/core/validation/validation.go`.
 */
import { parseCidr6 } from "../../common/net.ts";
import { isRecord, type KubeObject } from "./resources.ts";
import { fieldError, type StatusCause } from "./status.ts";

const IPV4_CIDR =
  /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}\/(3[0-2]|[12]?\d)$/;

/** Go's `net.ParseCIDR`, as the apiserver's `ValidateCIDR` runs it: the family, or undefined. */
function familyOf(text: string): 4 | 6 | undefined {
  if (IPV4_CIDR.test(text)) return 4;
  return parseCidr6(text) ? 6 : undefined;
}

function specOf(obj: KubeObject): Record<string, unknown> {
  return isRecord(obj.spec) ? obj.spec : {};
}

function stringsOf(value: unknown): string[] {
  return Array.isArray(value) ? value.map(String) : [];
}

/** Applies the v1 conversion to `obj` in place (create and update alike). */
export function normalizePodCidrs(obj: KubeObject): void {
  if (!isRecord(obj.spec)) return;
  const spec = obj.spec;
  const single = typeof spec.podCIDR === "string" ? spec.podCIDR : "";
  let list = stringsOf(spec.podCIDRs);
  if (single !== "" && (list.length === 0 || list[0] !== single)) list = [single];
  if (list.length > 0) {
    spec.podCIDRs = list;
    spec.podCIDR = list[0];
  } else {
    delete spec.podCIDRs;
    delete spec.podCIDR;
  }
}

/** `ValidateNode`'s pod CIDR rules. */
export function podCidrCauses(obj: KubeObject): StatusCause[] {
  const list = stringsOf(specOf(obj).podCIDRs);
  const causes: StatusCause[] = [];
  const families = list.map(familyOf);
  list.forEach((value, i) => {
    if (families[i] === undefined) {
      causes.push(
        fieldError(
          `spec.podCIDRs[${i}]`,
          "Invalid",
          "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)",
          value,
        ),
      );
    }
  });
  if (list.length > 1) {
    const dualStack = list.length === 2 && families[0] !== undefined && families[1] !== undefined &&
      families[0] !== families[1];
    if (!dualStack) {
      causes.push(
        fieldError("spec.podCIDRs", "Invalid", "may specify no more than one CIDR for each IP family", list),
      );
    }
    list.forEach((value, i) => {
      if (list.indexOf(value) < i) {
        causes.push(fieldError(`spec.podCIDRs[${i}]`, "Duplicate", undefined, value));
      }
    });
  }
  return causes;
}

/** `ValidateNodeUpdate`'s rule: pod CIDRs go from none to some, and never change after. */
export function podCidrUpdateCauses(next: KubeObject, old: KubeObject): StatusCause[] {
  const before = stringsOf(specOf(old).podCIDRs);
  const after = stringsOf(specOf(next).podCIDRs);
  if (before.length === 0) return [];
  if (before.length === after.length && before.every((c, i) => c === after[i])) return [];
  return [
    fieldError("spec.podCIDRs", "Forbidden", 'node updates may not change podCIDR except from "" to valid'),
  ];
}

/** `ValidateNodeUpdate`'s rule for `spec.providerID`: from "" to a value, and never changed or cleared after. */
export function providerIdUpdateCauses(next: KubeObject, old: KubeObject): StatusCause[] {
  const before = specOf(old).providerID;
  const after = specOf(next).providerID;
  if (typeof before !== "string" || before === "" || before === after) return [];
  return [
    fieldError(
      "spec.providerID",
      "Forbidden",
      'node updates may not change providerID except from "" to valid',
    ),
  ];
}
