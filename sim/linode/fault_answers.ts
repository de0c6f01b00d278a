/**
 * The answers of the transient-fault kinds: what the real API and the proxies in front of it send while a Linode
 * is busy, a request timed out, the API is in maintenance, or a proxy answers for it (HTML pages, even with 200).
 */
import { errorResponse, json } from "./http.ts";

/** Transient answers the API gives besides 429 and plain 5xx. */
export type TransientFault =
  /** `400 {"errors":[{"reason":"Linode busy."}]}`: the Linode is busy with another job (linodego retries it). */
  | { kind: "busy" }
  /** 408 Request Timeout (linodego retries it). */
  | { kind: "requestTimeout" }
  /** 503 with `X-Maintenance-Mode`: the API is in a maintenance window (linodego does not retry it). */
  | { kind: "maintenance" }
  /** An HTML error page from a front proxy (nginx), with this status (400 by default). */
  | { kind: "htmlError"; status?: 400 | 502 | 503 | 504 }
  /** A 200 whose body is an HTML page (a proxy's or a captive portal's), not the API's JSON. */
  | { kind: "htmlOk" }
  /** A 200 with a JSON body of the wrong shape (`{}` by default). */
  | { kind: "wrongBody"; body?: unknown };

/** The kinds above, for the admin endpoint. */
export const TRANSIENT_KINDS = [
  "busy",
  "requestTimeout",
  "maintenance",
  "htmlError",
  "htmlOk",
  "wrongBody",
] as const;

const TITLES: Record<number, string> = {
  200: "Welcome",
  400: "400 Bad Request",
  502: "502 Bad Gateway",
  503: "503 Service Temporarily Unavailable",
  504: "504 Gateway Time-out",
};

function htmlPage(status: number): Response {
  const title = TITLES[status] ?? String(status);
  const body =
    `<html>\r\n<head><title>${title}</title></head>\r\n<body>\r\n<center><h1>${title}</h1></center>\r\n` +
    `<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n`;
  // linodego recognises a proxy's page by exactly these headers (RequestNGINXRetryCondition).
  return new Response(body, { status, headers: { "content-type": "text/html", server: "nginx" } });
}

/** The response of one transient fault. The request is not handled: none of these acts on anything. */
export function transientAnswer(fault: TransientFault): Response {
  switch (fault.kind) {
    case "busy":
      return errorResponse(400, [{ reason: "Linode busy." }]);
    case "requestTimeout":
      // The body of a real 408 is not documented; the Linode error shape is the likeliest.
      return errorResponse(408, [{ reason: "Request Timeout" }]);
    case "maintenance":
      // The header's value is not documented: linodego only checks that it is present.
      return errorResponse(503, [{ reason: "Currently in maintenance mode." }], {
        "x-maintenance-mode": "true",
      });
    case "htmlError":
      return htmlPage(fault.status ?? 400);
    case "htmlOk":
      return htmlPage(200);
    case "wrongBody":
      return json(fault.body ?? {});
  }
}
