/** A stand-in Sentry endpoint on 127.0.0.1 that records every envelope it is sent (test fixture). */

/** One recorded envelope: its raw text and its items' JSON. */
export interface Envelope {
  readonly raw: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly items: readonly Record<string, unknown>[];
}

/** The running stand-in. */
export interface SentryStandIn extends AsyncDisposable {
  /** A DSN that sends to this stand-in (project 1). */
  readonly dsn: string;
  readonly envelopes: Envelope[];
  /** The event items (`type: event`) of every envelope. */
  events(): Record<string, unknown>[];
}

/** Starts the stand-in on a free port of 127.0.0.1. */
export function startSentryStandIn(): SentryStandIn {
  const envelopes: Envelope[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const raw = await req.text();
    const lines = raw.split("\n").filter((l) => l.trim() !== "");
    const items: Record<string, unknown>[] = [];
    // Envelope: a header line, then (item header, payload) pairs.
    for (let i = 1; i + 1 < lines.length; i += 2) {
      const header = JSON.parse(lines[i] ?? "{}") as Record<string, unknown>;
      items.push({ ...header, payload: JSON.parse(lines[i + 1] ?? "null") });
    }
    envelopes.push({ raw: `${req.url}\n${raw}`, headers: Object.fromEntries(req.headers), items });
    return Response.json({ id: "0" });
  });
  const port = server.addr.port;
  return {
    dsn: `http://0123456789abcdef0123456789abcdef@127.0.0.1:${port}/1`,
    envelopes,
    events: () =>
      envelopes.flatMap((e) =>
        e.items.filter((i) => i.type === "event").map((i) => i.payload as Record<string, unknown>)
      ),
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}
