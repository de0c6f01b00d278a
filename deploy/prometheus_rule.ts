/**
 * `deno task alerts`: writes deploy/monitoring-alerts.yaml, the PrometheusRule the Prometheus Operator loads,
 * from the plain rules file deploy/monitoring-alerts.rules.yaml (the one source of the rules). The rules are
 * copied as text under `spec:`, so their comments (why each threshold is what it is) ship in both forms.
 * tests/monitoring_rules_test.ts fails when the two files disagree.
 */

/** The plain Prometheus rules file, relative to the repository root. */
export const RULES_FILE = "deploy/monitoring-alerts.rules.yaml";

/** The PrometheusRule manifest, relative to the repository root. */
export const PROMETHEUS_RULE_FILE = "deploy/monitoring-alerts.yaml";

const HEADER =
  `# The Linode CCM's alerts as a PrometheusRule for the Prometheus Operator (kube-prometheus). Generated from
# deploy/monitoring-alerts.rules.yaml by \`deno task alerts\`: edit that file, not this one. Each alert links its
# runbook in docs/operations.md. Your Prometheus must select this object: kube-prometheus selects every
# PrometheusRule; kube-prometheus-stack wants its release label (add \`release: <name>\` below).
#   kubectl apply -f deploy/monitoring-alerts.yaml
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: ccm-linode
  namespace: kube-system
  labels:
    app: ccm-linode
    prometheus: k8s
    role: alert-rules
spec:
`;

/** The PrometheusRule for the rules file's text: its `groups:` onwards, indented under `spec:`. */
export function prometheusRule(rulesText: string): string {
  const start = rulesText.search(/^groups:/m);
  if (start < 0) throw new TypeError(`${RULES_FILE} has no top-level groups:`);
  const body = rulesText.slice(start).trimEnd().split("\n").map((line) => line === "" ? "" : `  ${line}`);
  return `${HEADER}${body.join("\n")}\n`;
}

if (import.meta.main) {
  const root = new URL("../", import.meta.url);
  const text = prometheusRule(await Deno.readTextFile(new URL(RULES_FILE, root)));
  await Deno.writeTextFile(new URL(PROMETHEUS_RULE_FILE, root), text);
  console.log(`wrote ${PROMETHEUS_RULE_FILE}`);
}
