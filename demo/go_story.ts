/**
 * The story of `deno task demo --world=go-ccm`: the cluster was run by the Go CCM, which still holds the Lease
 * while this CCM's replicas stand by. The Go CCM is scaled to zero (its image swapped for this one); once its
 * Lease expires a replica takes over and adopts every NodeBalancer in place; then a Node joins, a Service is
 * created and one is deleted.
 */
import type { GoCcmWorld } from "../sim/mod.ts";
import type { DemoSnapshot } from "./snapshot.ts";
import type { Scene } from "./story.ts";

/** One line for the view before the story starts. */
export const GO_CCM_PREVIEW =
  "  (from 00:05: the Go CCM stops, a replica takes its Lease and adopts its NodeBalancers, a node joins, " +
  "a Service is created, one is deleted)";

const OWNER_TAG = "ccm-owner:";

function isAdopted(world: GoCcmWorld, nodeBalancerId: number): boolean {
  return world.linode.world.nodeBalancer(nodeBalancerId)?.tags.some((t) => t.startsWith(OWNER_TAG)) ?? false;
}

function leader(s: DemoSnapshot): string | undefined {
  return s.leader.replicas.find((r) => r.state === "leading")?.label;
}

function adoption(world: GoCcmWorld): Scene {
  return {
    atMs: 5_000,
    act: () => {
      world.lease.stop();
      return "the Go CCM is scaled to 0 (image swapped): it stops renewing Lease kube-system/cloud-controller-manager";
    },
    outcomes: [
      (s) => {
        const label = leader(s);
        return label ? `replica ${label} took the Lease once the Go CCM's had expired` : undefined;
      },
      () => {
        if (!world.services.every((svc) => isAdopted(world, svc.nodeBalancerId))) return undefined;
        const ids = world.services.map((svc) => `${svc.nodeBalancerId} (${svc.key})`).join(", ");
        const created = world.linode.calls.count("POST /v4/nodebalancers");
        return `CCM adopted NodeBalancers ${ids} in place: same IPs, ownership tag added, ${created} created`;
      },
    ],
  };
}

function joining(world: GoCcmWorld): Scene {
  const name = `go-node-${world.nodes.length + 1}`;
  let vpcIp = "";
  return {
    atMs: 25_000,
    act: () => {
      const id = world.addNode(name);
      vpcIp = world.nodes.find((n) => n.linodeId === id)?.vpcIp ?? "";
      return `node ${name} joins as linode ${id}: kubelet registers it, uninitialised`;
    },
    outcomes: [
      (s) => s.nodes.find((n) => n.name === name)?.initialised ? `CCM initialised ${name}` : undefined,
      (s) =>
        s.nodes.find((n) => n.name === name)?.route === "routed"
          ? `CCM routed ${name}'s pod CIDR`
          : undefined,
      () => {
        const nbs = world.services.map((svc) => world.linode.world.nodeBalancer(svc.nodeBalancerId));
        const everywhere = nbs.every((nb) =>
          nb?.configs.every((c) => c.nodes.some((n) => n.address.startsWith(`${vpcIp}:`)))
        );
        return everywhere ? `CCM added ${name} to every port of the adopted NodeBalancers` : undefined;
      },
    ],
  };
}

function created(world: GoCcmWorld): Scene {
  return {
    atMs: 40_000,
    act: () => {
      world.kube.store.create("services", {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: "shop", namespace: "default", labels: { app: "shop" } },
        spec: {
          type: "LoadBalancer",
          selector: { app: "shop" },
          ports: [{ name: "https", port: 443, protocol: "TCP" }],
        },
      });
      return "Service default/shop of type LoadBalancer is created";
    },
    outcomes: [(s) => {
      const lb = s.loadBalancers.rows?.find((r) => r.service === "default/shop");
      return lb?.ip ? `CCM gave shop NodeBalancer ${lb.nodeBalancerId} at ${lb.ip}` : undefined;
    }],
  };
}

function deleted(world: GoCcmWorld): Scene {
  const last = world.services.at(-1);
  return {
    atMs: 50_000,
    act: () => {
      world.kube.store.delete("services", last?.name ?? "", "default");
      return `Service ${last?.key} is deleted (it waits on the load-balancer-cleanup finalizer)`;
    },
    outcomes: [() =>
      world.kube.store.get("services", last?.name ?? "", "default") === undefined &&
        world.linode.world.nodeBalancer(last?.nodeBalancerId ?? 0) === undefined
        ? `CCM deleted the Go CCM's NodeBalancer ${last?.nodeBalancerId} and released the finalizer`
        : undefined],
  };
}

/** The scenes of the switch, on a world from `startGoCcmWorld`. */
export function goCcmScenes(world: GoCcmWorld): Scene[] {
  return [adoption(world), joining(world), created(world), deleted(world)];
}
