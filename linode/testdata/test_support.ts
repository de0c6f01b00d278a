/** Test helpers for `linode/` tests: a client wired to a sim, and a clock that records sleeps. */
import type { Clock } from "../../common/clock.ts";
import { componentLogger } from "../../common/log.ts";
import { Registry } from "../../common/metrics.ts";
import { LinodeClient, type LinodeClientOptions } from "../client.ts";
import { staticToken } from "../token.ts";

/** A clock whose `sleep` returns at once and remembers each requested delay. */
export interface RecordingClock extends Clock {
  readonly sleeps: number[];
  /** Runs before each sleep returns (e.g. to drop leadership between attempts). */
  onSleep?: (ms: number) => void;
}

/** A `RecordingClock` starting at a fixed time. */
export function recordingClock(): RecordingClock {
  const clock: RecordingClock = {
    sleeps: [],
    now: () => Date.UTC(2026, 0, 1),
    monotonic: () => 0,
    sleep(ms: number, signal?: AbortSignal): Promise<void> {
      signal?.throwIfAborted();
      clock.sleeps.push(ms);
      clock.onSleep?.(ms);
      return Promise.resolve();
    },
  };
  return clock;
}

/** What a test gets back from `clientFor`. */
export interface TestClient {
  client: LinodeClient;
  metrics: Registry;
  clock: RecordingClock;
}

/** A client for the sim at `url` accepting `token`, with fast test defaults. */
export function clientFor(
  sim: { url: string; token: string },
  overrides: Partial<LinodeClientOptions> = {},
): TestClient {
  const metrics = new Registry();
  const clock = recordingClock();
  const client = new LinodeClient({
    baseUrl: sim.url,
    token: staticToken(sim.token),
    timeoutMs: 2_000,
    metrics,
    log: componentLogger("linode"),
    clock,
    random: () => 0.5,
    ...overrides,
  });
  return { client, metrics, clock };
}
