/**
 * The Go CCM's Linode client metric, `ccm_linode_client_requests_total{method, result}`: one count per client
 * call (a paged listing counts once, retries do not count), `method` being the linodego method the Go CCM
 * calls for that request (its generated `ClientWithPrometheus` wrapper), `result` `ok` or `error`.
 * Operators' alerts on the Go name keep working; `ccm_linode_requests_total` (per request) stays beside it.
 */

/** The metric's name, as the Go CCM registers it. */
export const GO_CLIENT_METRIC = "ccm_linode_client_requests_total";

/** linodego's method for each `METHOD /route` template this client calls. */
export const GO_CLIENT_METHODS: Readonly<Record<string, string>> = Object.freeze({
  "GET /profile": "GetProfile",
  "GET /linode/instances": "ListInstances",
  "GET /linode/instances/{id}": "GetInstance",
  "GET /linode/instances/{id}/configs": "ListInstanceConfigs",
  "PUT /linode/instances/{id}/configs/{id}/interfaces/{id}": "UpdateInstanceConfigInterface",
  "GET /linode/instances/{id}/interfaces": "ListInterfaces",
  "GET /linode/instances/{id}/interfaces/{id}": "GetInterface",
  "PUT /linode/instances/{id}/interfaces/{id}": "UpdateInterface",
  "GET /vpcs": "ListVPCs",
  "GET /vpcs/{id}": "GetVPC",
  "GET /vpcs/{id}/ips": "ListVPCIPAddresses",
  "GET /vpcs/{id}/ipv6s": "ListVPCIPv6Addresses",
  "GET /vpcs/ips": "ListAllVPCIPAddresses",
  "GET /nodebalancers": "ListNodeBalancers",
  "GET /nodebalancers/{id}": "GetNodeBalancer",
  "POST /nodebalancers": "CreateNodeBalancer",
  "PUT /nodebalancers/{id}": "UpdateNodeBalancer",
  "DELETE /nodebalancers/{id}": "DeleteNodeBalancer",
  "GET /nodebalancers/{id}/configs": "ListNodeBalancerConfigs",
  "POST /nodebalancers/{id}/configs": "CreateNodeBalancerConfig",
  "PUT /nodebalancers/{id}/configs/{id}": "UpdateNodeBalancerConfig",
  "DELETE /nodebalancers/{id}/configs/{id}": "DeleteNodeBalancerConfig",
  "POST /nodebalancers/{id}/configs/{id}/rebuild": "RebuildNodeBalancerConfig",
  "GET /nodebalancers/{id}/configs/{id}/nodes": "ListNodeBalancerNodes",
  "POST /nodebalancers/{id}/configs/{id}/nodes": "CreateNodeBalancerNode",
  "PUT /nodebalancers/{id}/configs/{id}/nodes/{id}": "UpdateNodeBalancerNode",
  "DELETE /nodebalancers/{id}/configs/{id}/nodes/{id}": "DeleteNodeBalancerNode",
  "GET /nodebalancers/{id}/firewalls": "ListNodeBalancerFirewalls",
  "GET /networking/firewalls": "ListFirewalls",
  "GET /networking/firewalls/{id}": "GetFirewall",
  "POST /networking/firewalls": "CreateFirewall",
  "PUT /networking/firewalls/{id}": "UpdateFirewall",
  "DELETE /networking/firewalls/{id}": "DeleteFirewall",
  "GET /networking/firewalls/{id}/rules": "GetFirewallRules",
  "PUT /networking/firewalls/{id}/rules": "UpdateFirewallRules",
  "GET /networking/firewalls/{id}/devices": "ListFirewallDevices",
  "POST /networking/firewalls/{id}/devices": "CreateFirewallDevice",
  "DELETE /networking/firewalls/{id}/devices/{id}": "DeleteFirewallDevice",
  "POST /networking/reserved/ips": "ReserveIPAddress",
  "GET /networking/reserved/ips/{address}": "GetReservedIPAddress",
  "DELETE /networking/reserved/ips/{address}": "DeleteReservedIPAddress",
});

/** The linodego method name of a request template; the template itself when unmapped (a test keeps none so). */
export function goClientMethod(method: string, route: string): string {
  return GO_CLIENT_METHODS[`${method} ${route}`] ?? `${method} ${route}`;
}
