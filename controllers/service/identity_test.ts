import assert from "node:assert/strict";
import { ClusterIdentity, ClusterIdentityUnknownError, clusterTag } from "./identity.ts";

Deno.test("clusterTag() is the Namespace UID's 32 hex digits, within Linode's 50-character tags", () => {
  const tag = clusterTag("0F1E2D3C-4B5A-4697-8877-665544332211");
  assert.equal(tag, "ccm-cluster:0f1e2d3c4b5a46978877665544332211");
  assert.ok(tag.length <= 50);
  assert.throws(() => clusterTag(""), RangeError);
});

Deno.test("ClusterIdentity.tag() reads once, and retries a failed read without remembering it", async () => {
  let reads = 0;
  let fail = true;
  const identity = new ClusterIdentity({
    namespaceUid: (name) => {
      reads++;
      assert.equal(name, "kube-system");
      if (fail) return Promise.reject(new Error("HTTP 403"));
      return Promise.resolve("0f1e2d3c-4b5a-4697-8877-665544332211");
    },
  });
  await assert.rejects(identity.tag(), ClusterIdentityUnknownError);
  assert.equal(identity.known(), undefined);
  fail = false;
  assert.equal(await identity.tag(), "ccm-cluster:0f1e2d3c4b5a46978877665544332211");
  await identity.tag();
  assert.equal(reads, 2);
});
