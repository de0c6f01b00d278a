import assert from "node:assert/strict";
import { FakeClock } from "../../common/clock.ts";
import { AwaitingRefreshError, RefreshPacer } from "./lookup.ts";

Deno.test("RefreshPacer.claim() allows one forced refresh per interval and per collection, then says how long to wait", () => {
  const clock = new FakeClock();
  const pacer = new RefreshPacer(clock, 2_000);
  pacer.claim("instances", "a");
  pacer.claim("vpc", "a");
  clock.advance(500);
  assert.throws(() => pacer.claim("instances", "b"), (e: unknown) => {
    assert.ok(e instanceof AwaitingRefreshError);
    assert.equal(e.retryAfterMs, 1_500);
    assert.equal(e.quiet, true);
    assert.match(e.message, /instances data may predate node b/);
    return true;
  });
  clock.advance(1_500);
  pacer.claim("instances", "b");
});

Deno.test("RefreshPacer.firstSeen() keeps the first sighting until forget(), and predates() compares load time with it", () => {
  const clock = new FakeClock();
  const pacer = new RefreshPacer(clock);
  clock.advance(10_000);
  const first = pacer.firstSeen("n");
  clock.advance(300);
  assert.equal(pacer.firstSeen("n"), first);
  assert.equal(pacer.predates(400, first), true, "loaded 100 ms before the Node was seen");
  assert.equal(pacer.predates(300, first), false, "loaded as the Node was seen");
  assert.equal(pacer.predates(0, first), false);
  pacer.forget("n");
  assert.equal(pacer.firstSeen("n"), first + 300);
});
