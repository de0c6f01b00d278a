import assert from "node:assert/strict";
import { CallCounter } from "../sim/linode/calls.ts";
import { isBackgroundRoute } from "./ccm_causes.ts";

/** Paths as the CCM sends them, keyed by the emulator's own counter (so the templates are the real ones). */
const CASES: readonly { method: string; path: string; background: boolean }[] = [
  { method: "POST", path: "/v4/nodebalancers", background: false },
  { method: "GET", path: "/v4/nodebalancers", background: false },
  { method: "GET", path: "/v4/nodebalancers/300001/configs", background: false },
  { method: "POST", path: "/v4/nodebalancers/300001/configs/600001/nodes", background: false },
  { method: "GET", path: "/v4/networking/firewalls", background: false },
  { method: "GET", path: "/v4/networking/reserved/ips", background: false },
  { method: "GET", path: "/v4/vpcs", background: false },
  { method: "GET", path: "/v4/linode/instances", background: true },
  { method: "GET", path: "/v4/linode/instances/51000103", background: true },
  {
    method: "PUT",
    path: "/v4/linode/instances/51000103/configs/71000103/interfaces/1200205",
    background: true,
  },
  { method: "GET", path: "/v4/vpcs/7/ips", background: true },
  { method: "GET", path: "/v4beta/vpcs/7/ipv6s", background: true },
  { method: "GET", path: "/v4/vpcs/ips", background: true },
];

for (const c of CASES) {
  Deno.test(`isBackgroundRoute() ${c.method} ${c.path} is ${c.background ? "" : "not "}background`, () => {
    const key = new CallCounter().record(c.method, c.path, 0).key;
    assert.equal(isBackgroundRoute(key), c.background, key);
  });
}
