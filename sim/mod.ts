/** The emulators' public entry: a Linode API v4 and a Kubernetes API on 127.0.0.1, plus kubelet's part. */
export { type LinodeSim, type LinodeSimOptions, startLinodeSim } from "./linode/server.ts";
export { DOCUMENTED_RATE_LIMITS, GENEROUS_RATE_LIMITS, type RateLimitRule } from "./linode/rate_limit.ts";
export { type GoCcmBackend, goCcmCreateBody, type GoCcmService } from "./linode/seed_nodebalancers.ts";
export type { NbNodeStatus, NodeBalancerSnapshot } from "./linode/nb_records.ts";
export { KubeSim, type KubeSimOptions, startKubeSim } from "./kube/server.ts";
export {
  kubeletNode,
  type KubeletNodeOptions,
  registerNode,
  setNodeReady,
  UNINITIALIZED_TAINT,
} from "./kubelet.ts";
export { type DemoWorld, type DemoWorldOptions, startDemoWorld } from "./demo_world.ts";
export {
  CCM_LEASE,
  type DriftNames,
  GO_CCM_DEFAULT_PINS,
  GO_CCM_LENIENT_VALUES,
  goCcmAddresses,
  type GoCcmDrift,
  type GoCcmLeaseHolder,
  type GoCcmNode,
  type GoCcmWorld,
  type GoCcmWorldOptions,
  LB_CLEANUP_FINALIZER,
  type SeededService,
  startGoCcmWorld,
} from "./go_ccm_world.ts";
