/** Narrowing of `POST /vpcs` bodies (also `POST /__admin/world/vpcs`) into `VpcStore.create` input. */
import { type Body, fieldError, isRecord, optString } from "./http.ts";

/** Input of `world.createVpc`. */
export interface CreateVpcInput {
  label: string;
  region: string;
  description?: string;
  /** `[{ range?: "/52" }]`: checked by the store (`vpc_ipv6.ts`). */
  ipv6?: unknown;
  subnets?: { label: string; ipv4: string; ipv6?: unknown }[];
}

/** A `POST /vpcs` body → `create` input; wrong types are 400s on the field. */
export function parseVpcInput(body: Body): CreateVpcInput {
  const raw = body.subnets ?? [];
  if (!Array.isArray(raw)) throw fieldError("subnets", "subnets must be an array");
  return {
    label: optString(body, "label") ?? "",
    region: optString(body, "region") ?? "",
    description: optString(body, "description"),
    ipv6: body.ipv6,
    subnets: raw.map((s, i) => {
      if (!isRecord(s)) throw fieldError(`subnets[${i}]`, "Must be an object");
      const prefix = `subnets[${i}].`;
      const ipv6 = s.ipv6;
      return { label: optString(s, "label", prefix) ?? "", ipv4: optString(s, "ipv4", prefix) ?? "", ipv6 };
    }),
  };
}
