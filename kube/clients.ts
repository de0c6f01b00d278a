/** The Kubernetes API clients the program uses, built once from a KubeConfig and passed in as dependencies. */
import {
  AuthenticationV1Api,
  AuthorizationV1Api,
  CoordinationV1Api,
  CoreV1Api,
  createConfiguration,
  EventsV1Api,
  type HttpLibrary,
  type KubeConfig,
  ServerConfiguration,
  setHeaderMiddleware,
  type V1Node,
  type V1Secret,
  type V1Service,
} from "@kubernetes/client-node";
import type { WriteGuard } from "../common/write_guard.ts";
import type { Fence } from "../common/write_guard.ts";
import type { Registry } from "../common/metrics.ts";
import type { ResourceSource } from "./informer.ts";
import {
  isNotFound,
  makeHttpLibrary,
  type PermissionObserver,
  signalOptions,
  toKubeApiError,
} from "./requests.ts";

/** The API clients plus the KubeConfig they came from (informers need it for watches). */
export interface KubeClients {
  readonly kc: KubeConfig;
  /** Nodes, Services, core/v1 Events. Writes are fenced when a fence was given. */
  readonly core: CoreV1Api;
  /** Leases. Never fenced: the leader elector writes the Lease to become leader in the first place. */
  readonly coordination: CoordinationV1Api;
  /** events.k8s.io/v1 Events. Writes are fenced when a fence was given. */
  readonly events: EventsV1Api;
}

/** Options of `makeKubeClients`. */
export interface KubeClientOptions {
  metrics: Registry;
  /** Every write of `core` and `events` asks it immediately before sending. */
  fence?: Fence;
  /** `--dry-run`: every write of every client (Leases too) asks it, and it refuses. */
  writeGuard?: WriteGuard;
  /** Per-request timeout (default 30 s). */
  requestTimeoutMs?: number;
  /** Sent as User-Agent (default `linode-cloud-controller-manager`). */
  userAgent?: string;
  /** Told about every answer: a refusal for want of an RBAC permission is reported and becomes its error. */
  permissions?: PermissionObserver;
}

type ApiClass<T> = new (config: ReturnType<typeof createConfiguration>) => T;

/**
 * Wraps every method of a generated client so that a failed call rejects with `KubeApiError` rather than
 * client-node's `ApiException`, whatever the caller does with it afterwards.
 */
function normaliseErrors<T extends object>(api: T): T {
  return new Proxy(api, {
    get(target, prop) {
      const value: unknown = Reflect.get(target, prop, target);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        const result: unknown = value.apply(target, args);
        if (result instanceof Promise) {
          return result.catch((e: unknown) => {
            throw toKubeApiError(e);
          });
        }
        return result;
      };
    },
  });
}

function makeApi<T extends object>(
  kc: KubeConfig,
  http: HttpLibrary,
  userAgent: string,
  api: ApiClass<T>,
): T {
  const cluster = kc.getCurrentCluster();
  if (!cluster) {
    throw new TypeError("Cannot create Kubernetes clients: the kubeconfig has no current cluster");
  }
  const config = createConfiguration({
    baseServer: new ServerConfiguration(cluster.server, {}),
    authMethods: { default: kc },
    httpApi: http,
    middleware: [setHeaderMiddleware("User-Agent", userAgent)],
  });
  return normaliseErrors(new api(config));
}

/** Builds counted (`ccm_kube_requests_total`), timed-out and optionally fenced API clients. */
export function makeKubeClients(kc: KubeConfig, options: KubeClientOptions): KubeClients {
  const userAgent = options.userAgent ?? "linode-cloud-controller-manager";
  const fenced = makeHttpLibrary(options);
  const unfenced = makeHttpLibrary({ ...options, fence: undefined });
  return {
    kc,
    core: makeApi(kc, fenced, userAgent, CoreV1Api),
    coordination: makeApi(kc, unfenced, userAgent, CoordinationV1Api),
    events: makeApi(kc, fenced, userAgent, EventsV1Api),
  };
}

/** The review APIs of the secure port's delegated authentication and authorisation. */
export interface ReviewApis {
  readonly authentication: AuthenticationV1Api;
  readonly authorization: AuthorizationV1Api;
}

/**
 * Counted, timed-out clients for TokenReviews (from `authn`) and SubjectAccessReviews (from `authz`). Never
 * fenced nor refused in dry run: a review is a POST but writes nothing, and a standby serves `/metrics` too.
 */
export function makeReviewApis(
  kcs: { authn: KubeConfig; authz: KubeConfig },
  options: Pick<KubeClientOptions, "metrics" | "requestTimeoutMs" | "userAgent" | "permissions">,
): ReviewApis {
  const userAgent = options.userAgent ?? "linode-cloud-controller-manager";
  const http = makeHttpLibrary({
    metrics: options.metrics,
    permissions: options.permissions,
    requestTimeoutMs: options.requestTimeoutMs ?? 10_000,
  });
  return {
    authentication: makeApi(kcs.authn, http, userAgent, AuthenticationV1Api),
    authorization: makeApi(kcs.authz, http, userAgent, AuthorizationV1Api),
  };
}

/** A core/v1 resource listed and watched in every namespace, at `/api/v1/<resource>`. */
function coreSource<T>(resource: string, kind: string, list: ResourceSource<T>["list"]): ResourceSource<T> {
  return { resource, path: `/api/v1/${resource}`, apiVersion: "v1", kind, list };
}

/** Lists and watches every Node. */
export function nodeSource(core: CoreV1Api): ResourceSource<V1Node> {
  return coreSource("nodes", "Node", (selectors, signal) => core.listNode(selectors, signalOptions(signal)));
}

/** Lists and watches Services in every namespace. */
export function serviceSource(core: CoreV1Api): ResourceSource<V1Service> {
  return coreSource(
    "services",
    "Service",
    (selectors, signal) => core.listServiceForAllNamespaces(selectors, signalOptions(signal)),
  );
}

/**
 * Reads one Secret by name, for the TLS certificates of HTTPS NodeBalancer ports; undefined when it does not
 * exist. Nothing lists or watches Secrets: the CCM holds only those a Service names, and needs only `get`.
 */
export function secretReader(
  core: CoreV1Api,
): { read(namespace: string, name: string): Promise<V1Secret | undefined> } {
  return {
    async read(namespace, name) {
      try {
        return await core.readNamespacedSecret({ namespace, name });
      } catch (e) {
        if (isNotFound(e)) return undefined;
        throw e;
      }
    },
  };
}
