/**
 * Which Linode calls a CCM-process figure charges to its events: the emulator counts every call by route
 * template, and a figure about one controller's work leaves out the routes only other controllers call.
 */

/**
 * Routes only the node and route controllers call: Linode instances (listings, configs, interfaces) and VPC
 * address listings. The service controller has no client for them (`controllers/service/wiring.ts` gives it
 * NodeBalancers, firewalls, reserved IPs and VPC listings), so a call there is no new Service's cost.
 */
export function isBackgroundRoute(key: string): boolean {
  return /^[A-Z]+ \/v4(beta)?\/(linode\/instances(\/|$)|vpcs\/(\{id\}\/)?ipv?6?s$)/.test(key);
}
