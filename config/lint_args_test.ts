import assert from "node:assert/strict";
import { parseLintArgs } from "./lint_args.ts";

Deno.test("parseLintArgs() separates its own flags, FILE arguments and the CCM's flags", () => {
  const r = parseLintArgs(
    ["a.yaml", "-f", "b.yaml", "--filename=-", "--vpc-names", "v1", "--from-go-ccm"],
    {},
  );
  assert.equal(r.kind, "lint");
  if (r.kind !== "lint") return;
  assert.deepEqual(r.config.files, ["a.yaml", "b.yaml", "-"]);
  assert.deepEqual(r.config.defaults.vpc.names, ["v1"], "--vpc-names took its separate value");
  assert.equal(r.config.fromGoCcm, true);
  assert.equal(r.config.kube, null);
});

Deno.test("parseLintArgs() without files reads the cluster from KUBECONFIG, one namespace with -n", () => {
  const r = parseLintArgs(["-n", "shop"], { KUBECONFIG: "/k", LINODE_HOSTNAME_ONLY_INGRESS: "true" });
  assert.equal(r.kind, "lint");
  if (r.kind !== "lint") return;
  assert.deepEqual(r.config.kube, { kind: "kubeconfig", kubeconfig: "/k", from: "env" });
  assert.equal(r.config.namespace, "shop");
  assert.equal(r.config.defaults.hostnameOnlyIngress, true);
});

const PROBLEMS: { args: string[]; env?: Record<string, string>; want: RegExp }[] = [
  { args: ["-f"], want: /^-f: needs a value$/ },
  { args: ["x.yaml", "-n", "a"], want: /^-n: only with the cluster/ },
  { args: ["x.yaml", "--kubeconfig=/k"], want: /not both/ },
  { args: [], want: /^--kubeconfig: no Kubernetes API/ },
  {
    args: ["x.yaml"],
    env: { LINODE_HOSTNAME_ONLY_INGRESS: "yes" },
    want: /^LINODE_HOSTNAME_ONLY_INGRESS: invalid/,
  },
  { args: ["x.yaml", "--throttle=3"], want: /--throttle: unknown flag/ },
];

for (const c of PROBLEMS) {
  Deno.test(`parseLintArgs() refuses ${c.args.join(" ") || "nothing"}`, () => {
    const r = parseLintArgs(c.args, c.env ?? {});
    assert.equal(r.kind, "problems");
    if (r.kind === "problems") assert.ok(r.problems.some((p) => c.want.test(p)), r.problems.join("\n"));
  });
}

Deno.test("parseLintArgs() gives help for -h", () =>
  assert.equal(parseLintArgs(["x", "-h"], {}).kind, "help"));
