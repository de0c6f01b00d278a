/** Wire shapes of a Linode and its boot config, built with the API's defaults. */
import type { SimVpcIpv6 } from "./vpc_ipv6.ts";
import type { Config, ConfigInterfaceIPv4, Interface, Linode, LinodeSpecs } from "@linode/api-v4";

/** Every status the API reports for an instance. */
export const LINODE_STATUSES = [
  "running",
  "offline",
  "booting",
  "rebooting",
  "shutting_down",
  "provisioning",
  "deleting",
  "migrating",
  "rebuilding",
  "cloning",
  "restoring",
  "stopped",
  "resizing",
] as const;

/** An instance status (the API's list, which is wider than api-v4's type). */
export type SimLinodeStatus = typeof LINODE_STATUSES[number];

/** How a Linode's network interfaces are defined: on its config profiles, or on the Linode itself. */
export type InterfaceGeneration = "legacy_config" | "linode";

/** A Linode as the API returns it (api-v4's type lacks some statuses and `host_uuid`). */
export type SimLinode = Omit<Linode, "status" | "interface_generation"> & {
  status: SimLinodeStatus;
  host_uuid: string;
  interface_generation: InterfaceGeneration;
};

/**
 * A config profile interface as the API sends it (linodego's recorded fixtures): every key present,
 * `ipv4`/`ip_ranges` null on public and VLAN interfaces, `ipv6` null without VPC IPv6.
 */
export type SimInterface = Omit<Interface, "ipv4" | "ip_ranges" | "ipv6"> & {
  ipv4: ConfigInterfaceIPv4 | null;
  ip_ranges: string[] | null;
  ipv6: SimVpcIpv6 | null;
};

/** A config profile whose interfaces are `SimInterface`s. */
export type SimConfig = Omit<Config, "interfaces"> & { interfaces: SimInterface[] };

/** The `vpc` part of a Linode interface (`interface_generation: "linode"`). */
export interface SimVpcInterfaceData {
  vpc_id: number;
  subnet_id: number;
  ipv4: {
    addresses: { address: string; primary: boolean; nat_1_1_address: string | null }[];
    ranges: { range: string }[];
  };
  /** Only on an interface whose subnet has IPv6. */
  ipv6?: SimVpcIpv6;
}

/** The `public` part of a Linode interface. */
export interface SimPublicInterfaceData {
  ipv4: {
    addresses: { address: string; primary: boolean }[];
    shared: { address: string; linode_id: number }[];
  };
  ipv6: {
    ranges: { range: string; route_target: string | null }[];
    shared: { range: string; route_target: string | null }[];
    slaac: { address: string; prefix: number }[];
  };
}

/**
 * A Linode interface as `GET /linode/instances/{id}/interfaces/{interfaceId}` returns it (spec examples and
 * linode_api4-python's fixtures): exactly one of `public`, `vpc`, `vlan` is set; `default_route` lists only
 * the roles the interface holds.
 */
export interface SimLinodeInterface {
  id: number;
  mac_address: string;
  created: string;
  updated: string;
  version: number;
  default_route: { ipv4?: boolean; ipv6?: boolean };
  public: SimPublicInterfaceData | null;
  vpc: SimVpcInterfaceData | null;
  vlan: { vlan_label: string; ipam_address: string | null } | null;
}

const SPECS: Record<string, [vcpus: number, memory: number, disk: number, transfer: number]> = {
  "g6-nanode-1": [1, 1024, 25600, 1000],
  "g6-standard-1": [1, 2048, 51200, 2000],
  "g6-standard-2": [2, 4096, 81920, 4000],
  "g6-standard-4": [4, 8192, 163840, 5000],
  "g6-standard-6": [6, 16384, 327680, 8000],
  "g6-dedicated-2": [2, 4096, 81920, 4000],
  "g6-dedicated-4": [4, 8192, 163840, 5000],
};

/** Specs of a plan; unknown plans get g6-standard-2's. */
function specsOf(type: string): LinodeSpecs {
  const [vcpus, memory, disk, transfer] = SPECS[type] ?? [2, 4096, 81920, 4000];
  return { vcpus, memory, disk, transfer, gpus: 0, accelerated_devices: 0 };
}

/** Fields the caller chooses; everything else takes the API's usual values. */
export interface LinodeShapeInput {
  id: number;
  label: string;
  region: string;
  type: string;
  status: SimLinodeStatus;
  ipv4: string[];
  ipv6: string | null;
  tags: string[];
  group: string;
  image: string | null;
  lkeClusterId: number | null;
  interfaceGeneration: InterfaceGeneration;
  now: string;
}

/** A Linode object as `GET /linode/instances/{id}` returns it. */
export function linodeShape(input: LinodeShapeInput): SimLinode {
  return {
    id: input.id,
    label: input.label,
    group: input.group,
    status: input.status,
    created: input.now,
    updated: input.now,
    type: input.type,
    region: input.region,
    image: input.image,
    ipv4: input.ipv4,
    ipv6: input.ipv6,
    specs: specsOf(input.type),
    alerts: { cpu: 180, io: 10000, network_in: 10, network_out: 10, transfer_quota: 80 },
    backups: { enabled: false, last_successful: null, schedule: { day: null, window: null } },
    hypervisor: "kvm",
    watchdog_enabled: true,
    tags: input.tags,
    host_uuid: crypto.randomUUID().replaceAll("-", ""),
    lke_cluster_id: input.lkeClusterId,
    capabilities: [],
    placement_group: null,
    disk_encryption: "disabled",
    has_user_data: false,
    locks: [],
    maintenance_policy: null,
    site_type: "core",
    interface_generation: input.interfaceGeneration,
  };
}

/** The boot config profile every instance gets, with the given interfaces. */
export function configShape(id: number, diskId: number, interfaces: SimInterface[], now: string): SimConfig {
  return {
    id,
    label: "My Boot Config",
    comments: "",
    created: now,
    updated: now,
    devices: { sda: { disk_id: diskId, volume_id: null }, sdb: { disk_id: diskId + 1, volume_id: null } },
    helpers: {
      updatedb_disabled: true,
      distro: true,
      modules_dep: true,
      network: true,
      devtmpfs_automount: true,
    },
    initrd: null,
    interfaces,
    kernel: "linode/grub2",
    memory_limit: 0,
    root_device: "/dev/sda",
    run_level: "default",
    virt_mode: "paravirt",
  };
}
