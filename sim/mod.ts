/** The emulators' public entry: a Linode API v4 and a Kubernetes API on 127.0.0.1, plus kubelet's part. */
export { type LinodeSim, type LinodeSimOptions, startLinodeSim } from "./linode/server.ts";
export { KubeSim, type KubeSimOptions, startKubeSim } from "./kube/server.ts";
export {
  kubeletNode,
  type KubeletNodeOptions,
  registerNode,
  setNodeReady,
  UNINITIALIZED_TAINT,
} from "./kubelet.ts";
export { type DemoWorld, type DemoWorldOptions, startDemoWorld } from "./demo_world.ts";
