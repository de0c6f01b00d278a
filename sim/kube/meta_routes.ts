/** Non-resource paths: discovery, `/version`, health and OpenAPI. */
import { apiGroup, coreVersions, groupList, resourceList, versionInfo } from "./discovery.ts";
import { json } from "./handlers.ts";
import { groupVersionDoc, openApiIndex } from "./openapi.ts";

/** Answers a non-resource path, or returns undefined when it is unknown (a 404). */
export function handleMeta(path: string, serverAddress: string, req: Request): Response | undefined {
  if (req.method !== "GET") return undefined;
  const segs = path.split("/").filter((s) => s !== "");
  if (path === "/version") return json(versionInfo());
  if (path === "/healthz" || path === "/livez" || path === "/readyz") {
    return new Response("ok", { headers: { "content-type": "text/plain" } });
  }
  if (path === "/api") return json(coreVersions(serverAddress));
  if (segs.length === 2 && segs[0] === "api") return maybe(resourceList("", segs[1]!));
  if (path === "/apis") return json(groupList());
  if (segs[0] === "apis" && segs.length === 2) return maybe(apiGroup(segs[1]!));
  if (segs[0] === "apis" && segs.length === 3) return maybe(resourceList(segs[1]!, segs[2]!));
  if (path === "/openapi/v3") return json(openApiIndex());
  if (path.startsWith("/openapi/v3/")) return maybe(groupVersionDoc(path.slice("/openapi/v3/".length)));
  return undefined;
}

function maybe(body: Record<string, unknown> | undefined): Response | undefined {
  return body ? json(body) : undefined;
}
