/**
 * Writes `config/upstream_flags.ts`: every flag the Go CCM's binary accepts, read from the Go sources it is
 * built from (the upstream cloud-controller-manager command at the version the Go CCM pins, and the Go CCM's own
 * `main.go`), and the environment variables the Go CCM reads. Run it when the Go CCM moves to a new upstream
 * version (docs/development.md):
 *
 *   deno run -P=dev tests/upstream_flags_gen.ts [MIRRORS]    # MIRRORS defaults to /work/.mirror
 *
 * It reads bare git mirrors (`git show REV:PATH`), finds each flag registration (`fs.BoolVar(&x, "name", def,
 * …)`, `fs.Var(value, "name", …)`, …) in the functions that register them, and takes the name, pflag's value
 * type, the default and whether it is deprecated or hidden. It stops with an error when the wiring it relies on
 * changed (a new `AddFlags` call, a value type it does not know, a default it cannot resolve), so a new upstream
 * flag cannot slip past it. Only names, types and defaults are taken; no help text.
 */

/**
 * One Go source file and the functions in it that register flags (signatures up to the parameter list; none:
 * the whole file).
 */
type Source = readonly [module: Module, path: string, ...funcs: string[]];

/** The modules read, with the revision the Go CCM builds with (its go.mod), and their mirrors. */
const MODULES = {
  cp: { name: "k8s.io/cloud-provider", mirror: "kubernetes+cloud-provider", rev: "v0.35.4" },
  cm: { name: "k8s.io/controller-manager", mirror: "kubernetes+controller-manager", rev: "v0.35.4" },
  cb: { name: "k8s.io/component-base", mirror: "kubernetes+component-base", rev: "v0.35.4" },
  as: { name: "k8s.io/apiserver", mirror: "kubernetes+apiserver", rev: "v0.35.4" },
  go: {
    name: "github.com/linode/linode-cloud-controller-manager",
    mirror: "linode+linode-cloud-controller-manager",
    rev: "HEAD",
  },
  lgo: { name: "github.com/linode/linodego/v2", mirror: "linode+linodego", rev: "v2.0.0" },
} as const;

type Module = keyof typeof MODULES;

const SOURCES: readonly Source[] = [
  // CloudControllerManagerOptions.Flags: the flag sets below, plus master, kubeconfig, node-status-update-frequency
  // and the feature gates.
  ["cp", "options/options.go", "func (o *CloudControllerManagerOptions) Flags"],
  ["cp", "options/kubecloudshared.go", "func (o *KubeCloudSharedOptions) AddFlags"],
  ["cp", "options/cloudprovider.go", "func (s *CloudProviderOptions) AddFlags"],
  ["cp", "options/nodecontroller.go", "func (o *NodeControllerOptions) AddFlags"],
  ["cp", "options/servicecontroller.go", "func (o *ServiceControllerOptions) AddFlags"],
  [
    "cp",
    "options/webhook.go",
    "func (o *WebhookOptions) AddFlags",
    "func (o *WebhookServingOptions) AddFlags",
  ],
  ["cm", "options/generic.go", "func (o *GenericControllerManagerConfigurationOptions) AddFlags"],
  ["cm", "options/debugging.go", "func (o *DebuggingOptions) AddFlags"],
  ["cm", "pkg/leadermigration/options/options.go", "func (o *LeaderMigrationOptions) AddFlags"],
  ["cb", "config/options/leaderelectionconfig.go", "func BindLeaderElectionFlags"],
  ["cb", "featuregate/feature_gate.go", "func (f *featureGate) AddFlag"],
  ["cb", "logs/api/v1/options.go", "func addFlags"],
  ["cb", "cli/globalflag/globalflags.go", "func AddGlobalFlags"],
  ["as", "pkg/server/options/serving.go", "func (s *SecureServingOptions) AddFlags"],
  [
    "as",
    "pkg/server/options/authentication.go",
    "func (s *DelegatingAuthenticationOptions) AddFlags",
    "func (s *ClientCertAuthenticationOptions) AddFlags",
    "func (s *RequestHeaderAuthenticationOptions) AddFlags",
  ],
  ["as", "pkg/server/options/authorization.go", "func (s *DelegatingAuthorizationOptions) AddFlags"],
  ["go", "main.go", "func main"],
];

/**
 * Calls that must be in the sources as written, or the list above no longer covers the command's flags. Each is
 * [module, path, text]. Whitespace in `text` matches any run of whitespace.
 */
const WIRING: readonly [Module, string, string][] = [
  // The upstream command adds exactly these flag sets (CloudControllerManagerOptions.Flags) ...
  ["cp", "options/options.go", 'o.KubeCloudShared.AddFlags(fss.FlagSet("generic"))'],
  [
    "cp",
    "options/options.go",
    "o.Generic.AddFlags(&fss, allControllers, disabledByDefaultControllers, controllerAliases)",
  ],
  ["cp", "options/options.go", "o.NodeController.AddFlags(fss.FlagSet(names.CloudNodeController))"],
  ["cp", "options/options.go", "o.ServiceController.AddFlags(fss.FlagSet(names.ServiceLBController))"],
  ["cp", "options/options.go", "o.Webhook.AddFlags("],
  ["cp", "options/options.go", "o.WebhookServing.AddFlags("],
  ["cp", "options/options.go", 'o.SecureServing.AddFlags(fss.FlagSet("secure serving"))'],
  ["cp", "options/options.go", 'o.Authentication.AddFlags(fss.FlagSet("authentication"))'],
  ["cp", "options/options.go", 'o.Authorization.AddFlags(fss.FlagSet("authorization"))'],
  ["cp", "options/options.go", 'utilfeature.DefaultMutableFeatureGate.AddFlag(fss.FlagSet("generic"))'],
  ["cp", "options/kubecloudshared.go", "o.CloudProvider.AddFlags(fs)"],
  ["cm", "options/generic.go", 'o.Debugging.AddFlags(fss.FlagSet("debugging"))'],
  ["cm", "options/generic.go", 'o.LeaderMigration.AddFlags(fss.FlagSet("leader-migration"))'],
  ["cm", "options/generic.go", "options.BindLeaderElectionFlags(&o.LeaderElection, genericfs)"],
  ["as", "pkg/server/options/authentication.go", "s.ClientCert.AddFlags(fs)"],
  ["as", "pkg/server/options/authentication.go", "s.RequestHeader.AddFlags(fs)"],
  // ... and the global set: --version, the logging configuration flags, and the klog flags not covered by it,
  // which are none: component-base's klogflags.Init keeps only -v and -vmodule, both skipped here.
  ["cp", "app/controllermanager.go", "verflag.AddFlags(globalFlagSet)"],
  ["cp", "app/controllermanager.go", "logsapi.AddFlags(logOptions, globalFlagSet)"],
  [
    "cp",
    "app/controllermanager.go",
    "globalflag.AddGlobalFlags(globalFlagSet, cmd.Name(), logs.SkipLoggingConfigurationFlags())",
  ],
  ["cb", "logs/klogflags/klogflags.go", 'case "v", "vmodule":'],
  ["cb", "logs/logs.go", 'case "v", logsapi.LogFlushFreqFlagName:'],
  // --version is verflag's, registered at package level (VERSION_ROW).
  ["cb", "version/verflag/verflag.go", 'versionFlagName = "version"'],
  ["cb", "version/verflag/verflag.go", "versionFlag = Version(versionFlagName, VersionFalse,"],
  // The Go CCM passes no flag sets of its own to the upstream command, and adds its flags in main.
  ["go", "main.go", "fss := utilflag.NamedFlagSets{}"],
  ["go", "main.go", "app.DefaultInitFuncConstructors, controllerAliases, fss, stopCh)"],
];

/** pflag methods that register a flag, with where the name and default are among their arguments. */
const METHODS: Readonly<Record<string, { type: string; name: number; def?: number }>> = {
  BoolVar: { type: "bool", name: 1, def: 2 },
  BoolVarP: { type: "bool", name: 1, def: 3 },
  BoolP: { type: "bool", name: 0, def: 2 },
  Bool: { type: "bool", name: 0, def: 1 },
  StringVar: { type: "string", name: 1, def: 2 },
  String: { type: "string", name: 0, def: 1 },
  IntVar: { type: "int", name: 1, def: 2 },
  Int32Var: { type: "int32", name: 1, def: 2 },
  Float32Var: { type: "float32", name: 1, def: 2 },
  DurationVar: { type: "duration", name: 1, def: 2 },
  StringSliceVar: { type: "stringSlice", name: 1, def: 2 },
  StringArrayVar: { type: "stringArray", name: 1, def: 2 },
  IntSliceVar: { type: "intSlice", name: 1, def: 2 },
  IPVar: { type: "ip", name: 1, def: 2 },
  Var: { type: "var", name: 1 },
  VarP: { type: "var", name: 1 },
};

/** The value types behind `fs.Var(value, …)`, by the start of the value expression, with pflag's type name. */
const VALUE_TYPES: readonly [prefix: string, type: string][] = [
  ["cliflag.NewNamedCertKeyArray(", "namedCertKey"],
  ["VerbosityLevelPflag(", "level"],
  ["VModuleConfigurationPflag(", "moduleSpec"],
  ["&c.Options.Text.InfoBufferSize", "quantity"],
  ["&c.Options.JSON.InfoBufferSize", "quantity"],
  ["f", "mapStringBool"], // the feature gate itself
];

/** `--version`, registered by verflag when the package loads (checked in WIRING). */
const VERSION_ROW: Row = {
  name: "version",
  type: "version",
  def: "false",
  from: "k8s.io/component-base version/verflag/verflag.go",
};

/**
 * Conditions some registrations are made under, and whether they hold in the Go CCM's binary. The JSON log
 * flags exist only when the JSON format is registered, which takes importing component-base's
 * `logs/json/register`; no Go source of the Go CCM does (its dependencies' commands do, but no library it links).
 */
const CONDITIONS: Readonly<Record<string, () => Promise<boolean>>> = {
  '_, err := logRegistry.get("json"); err == nil': () =>
    goCcmImports("k8s.io/component-base/logs/json/register"),
};

/**
 * Defaults that are not literals in the registering call, as the defaulting code sets them, written as a value
 * would be written on the command line. Keyed by flag name, with the expression the call passes (checked, so a
 * changed expression must be read again). Read from: cloud-provider options/options.go
 * (NewCloudControllerManagerOptionsWithProviderDefaults) and config/v1alpha1/defaults.go; controller-manager
 * config/v1alpha1/defaults.go and options/debugging.go; component-base config/v1alpha1/defaults.go and
 * logs/api/v1/options.go; apiserver pkg/server/options (NewSecureServingOptions, NewDelegating*Options);
 * cloud-provider options/webhook.go (NewWebhookServingOptions, CloudControllerManagerWebhookPort); the Go CCM's
 * cloud/linode/cloud.go (ProviderName) and linodego (NBTypeCommon).
 */
const RESOLVED: Readonly<Record<string, readonly [expr: string, value: string]>> = {
  "cloud-provider": ["s.Name", ""],
  "cloud-config": ["s.CloudConfigFile", ""],
  "external-cloud-volume-plugin": ["o.ExternalCloudVolumePlugin", ""],
  "use-service-account-credentials": ["o.UseServiceAccountCredentials", "false"],
  "route-reconciliation-period": ["o.RouteReconciliationPeriod.Duration", "10s"],
  "node-monitor-period": ["o.NodeMonitorPeriod.Duration", "5s"],
  "cluster-name": ["o.ClusterName", "kubernetes"],
  "cluster-cidr": ["o.ClusterCIDR", ""],
  "concurrent-node-syncs": ["o.ConcurrentNodeSyncs", "1"],
  "concurrent-service-syncs": ["o.ConcurrentServiceSyncs", "1"],
  webhooks: ["o.Webhooks", ""],
  "webhook-bind-address": ["o.BindAddress", "0.0.0.0"],
  "webhook-secure-port": ["o.BindPort", "10260"],
  "webhook-cert-dir": ["o.ServerCert.CertDirectory", ""],
  "webhook-tls-cert-file": ["o.ServerCert.CertKey.CertFile", ""],
  "webhook-tls-private-key-file": ["o.ServerCert.CertKey.KeyFile", ""],
  master: ["o.Master", ""],
  kubeconfig: ["o.Generic.ClientConnection.Kubeconfig", ""],
  "node-status-update-frequency": ["o.NodeStatusUpdateFrequency.Duration", "5m0s"],
  "min-resync-period": ["o.MinResyncPeriod.Duration", "12h0m0s"],
  "kube-api-content-type": ["o.ClientConnection.ContentType", "application/vnd.kubernetes.protobuf"],
  "kube-api-qps": ["o.ClientConnection.QPS", "20"],
  "kube-api-burst": ["o.ClientConnection.Burst", "30"],
  "controller-start-interval": ["o.ControllerStartInterval.Duration", "0s"],
  controllers: ["o.Controllers", "*"],
  profiling: ["o.EnableProfiling", "true"],
  "contention-profiling": ["o.EnableContentionProfiling", "false"],
  "leader-elect": ["l.LeaderElect", "true"],
  "leader-elect-lease-duration": ["l.LeaseDuration.Duration", "15s"],
  "leader-elect-renew-deadline": ["l.RenewDeadline.Duration", "10s"],
  "leader-elect-retry-period": ["l.RetryPeriod.Duration", "2s"],
  "leader-elect-resource-lock": ["l.ResourceLock", "leases"],
  "leader-elect-resource-name": ["l.ResourceName", "cloud-controller-manager"],
  "leader-elect-resource-namespace": ["l.ResourceNamespace", "kube-system"],
  "logging-format": ["c.Format", "text"],
  "log-flush-frequency": ["c.FlushFrequency.Duration.Duration", "5s"],
  "bind-address": ["s.BindAddress", "0.0.0.0"],
  "secure-port": ["s.BindPort", "10258"],
  "disable-http2-serving": ["s.DisableHTTP2Serving", "false"],
  "cert-dir": ["s.ServerCert.CertDirectory", ""],
  "tls-cert-file": ["s.ServerCert.CertKey.CertFile", ""],
  "tls-private-key-file": ["s.ServerCert.CertKey.KeyFile", ""],
  "tls-cipher-suites": ["s.CipherSuites", ""],
  "tls-min-version": ["s.MinTLSVersion", ""],
  "http2-max-streams-per-connection": ["s.HTTP2MaxStreamsPerConnection", "0"],
  "permit-port-sharing": ["s.PermitPortSharing", "false"],
  "permit-address-sharing": ["s.PermitAddressSharing", "false"],
  "authentication-kubeconfig": ["s.RemoteKubeConfigFile", ""],
  "authentication-token-webhook-cache-ttl": ["s.CacheTTL", "10s"],
  "authentication-skip-lookup": ["s.SkipInClusterLookup", "false"],
  "authentication-tolerate-lookup-failure": ["s.TolerateInClusterLookupFailure", "false"],
  "client-ca-file": ["s.ClientCA", ""],
  "requestheader-username-headers": ["s.UsernameHeaders", "x-remote-user"],
  "requestheader-uid-headers": ["s.UIDHeaders", ""],
  "requestheader-group-headers": ["s.GroupHeaders", "x-remote-group"],
  "requestheader-extra-headers-prefix": ["s.ExtraHeaderPrefixes", "x-remote-extra-"],
  "requestheader-client-ca-file": ["s.ClientCAFile", ""],
  "requestheader-allowed-names": ["s.AllowedNames", ""],
  "authorization-kubeconfig": ["s.RemoteKubeConfigFile", ""],
  "authorization-webhook-cache-authorized-ttl": ["s.AllowCacheTTL", "10s"],
  "authorization-webhook-cache-unauthorized-ttl": ["s.DenyCacheTTL", "10s"],
  "authorization-always-allow-paths": ["s.AlwaysAllowPaths", "/healthz,/readyz,/livez"],
  "default-nodebalancer-type": ["string(linodego.NBTypeCommon)", "common"],
};

/** Defaults of the `fs.Var` values, which carry their own: [flag, default]. */
const VAR_DEFAULTS: Readonly<Record<string, string>> = {
  "tls-sni-cert-key": "",
  v: "0",
  vmodule: "",
  "log-text-info-buffer-size": "0",
  "log-json-info-buffer-size": "0",
  "feature-gates": "",
};

/** Flags whose value the Go CCM sets before parsing (its main's `VisitAll`), by the constant it sets. */
const GO_CCM_SETS: Readonly<Record<string, string>> = { "linode.ProviderName": "linode", '"true"': "true" };

/** Where the Go CCM reads environment variables: its own sources, and linodego's client as the Go CCM builds it. */
const ENV_SOURCES: readonly Source[] = [
  ["go", "main.go"],
  ["go", "cloud/linode/cloud.go"],
  ["go", "cloud/linode/client/client.go"],
  ["go", "cloud/linode/loadbalancers.go"],
  ["go", "cloud/linode/node_controller.go"],
  ["go", "cloud/linode/route_controller.go"],
  ["go", "cloud/linode/services/instances.go"],
  // The Go CCM calls linodego.NewClient (client/client.go); the package's init reads LINODE_DEBUG.
  ["lgo", "client.go", "func init", "func NewClient"],
];

/** One flag as written to config/upstream_flags.ts. */
interface Row {
  name: string;
  type: string;
  def: string;
  from: string;
  deprecated?: true;
  hidden?: true;
  goCcmSets?: string;
}

let mirrors = "/work/.mirror";

async function show(module: Module, path: string): Promise<string> {
  const { mirror, rev } = MODULES[module];
  const out = await new Deno.Command("git", {
    args: ["-C", `${mirrors}/${mirror}/repo`, "show", `${rev}:${path}`],
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) {
    throw new Error(`git show ${rev}:${path} in ${mirror}: ${new TextDecoder().decode(out.stderr)}`);
  }
  return new TextDecoder().decode(out.stdout);
}

/** Whether any Go source of the Go CCM (tests aside) imports `pkg`. */
async function goCcmImports(pkg: string): Promise<boolean> {
  const { mirror, rev } = MODULES.go;
  const out = await new Deno.Command("git", {
    args: [
      "-C",
      `${mirrors}/${mirror}/repo`,
      "grep",
      "-l",
      "-F",
      `"${pkg}"`,
      rev,
      "--",
      "*.go",
      ":!*_test.go",
    ],
    stdout: "piped",
  }).output();
  return new TextDecoder().decode(out.stdout).trim() !== "";
}

async function revision(module: Module): Promise<string> {
  const { mirror, rev } = MODULES[module];
  const out = await new Deno.Command("git", {
    args: ["-C", `${mirrors}/${mirror}/repo`, "rev-parse", "--short=8", rev],
    stdout: "piped",
  }).output();
  return rev === "HEAD" ? new TextDecoder().decode(out.stdout).trim() : rev;
}

/** Go source with comments blanked out (strings, raw strings and runes kept), so scanning sees only code. */
export function stripComments(src: string): string {
  let out = "";
  for (let i = 0; i < src.length;) {
    const c = src[i]!;
    if (c === "/" && src[i + 1] === "/") {
      while (i < src.length && src[i] !== "\n") (out += " ", i++);
    } else if (c === "/" && src[i + 1] === "*") {
      const end = src.indexOf("*/", i + 2);
      const stop = end < 0 ? src.length : end + 2;
      out += src.slice(i, stop).replace(/[^\n]/g, " ");
      i = stop;
    } else if (c === '"' || c === "`" || c === "'") {
      const end = literalEnd(src, i);
      out += src.slice(i, end);
      i = end;
    } else (out += c, i++);
  }
  return out;
}

/** Index just past the string, raw string or rune literal that starts at `i`. */
function literalEnd(src: string, i: number): number {
  const quote = src[i]!;
  let j = i + 1;
  while (j < src.length && src[j] !== quote) j += quote !== "`" && src[j] === "\\" ? 2 : 1;
  return j + 1;
}

/** Index of the bracket closing the one at `open`, skipping literals. */
function closing(src: string, open: number): number {
  const pairs: Record<string, string> = { "(": ")", "{": "}", "[": "]" };
  const stack: string[] = [];
  for (let i = open; i < src.length; i++) {
    const c = src[i]!;
    if (c === '"' || c === "`" || c === "'") i = literalEnd(src, i) - 1;
    else if (pairs[c]) stack.push(pairs[c]);
    else if (c === stack.at(-1)) {
      stack.pop();
      if (stack.length === 0) return i;
    }
  }
  throw new Error(`unbalanced bracket at ${open}`);
}

/** The body of the function whose signature starts with `signature`. */
function funcBody(src: string, signature: string, where: string): string {
  const at = src.indexOf(signature + "(");
  if (at < 0) throw new Error(`${where}: no "${signature}" (upstream changed: read it again)`);
  const params = closing(src, at + signature.length);
  const open = src.indexOf("{", params);
  return src.slice(open, closing(src, open) + 1);
}

/** Top-level comma-separated arguments of the call whose `(` is at `open`. */
function args(src: string, open: number): string[] {
  const end = closing(src, open);
  const out: string[] = [];
  let start = open + 1;
  for (let i = open + 1; i < end; i++) {
    const c = src[i]!;
    if (c === '"' || c === "`" || c === "'") i = literalEnd(src, i) - 1;
    else if (c === "(" || c === "{" || c === "[") i = closing(src, i);
    else if (c === ",") (out.push(src.slice(start, i).trim()), start = i + 1);
  }
  out.push(src.slice(start, end).trim());
  return out.filter((a) => a !== "");
}

/** The value of a Go string literal, or `undefined` when `expr` is not one. */
function goString(expr: string): string | undefined {
  if (/^`[^`]*`$/.test(expr)) return expr.slice(1, -1);
  if (!/^"(?:[^"\\]|\\.)*"$/.test(expr)) return undefined;
  return JSON.parse(expr.replace(/\\'/g, "'"));
}

/** A flag name: a string literal, or a constant defined as one in the same file. */
function flagName(expr: string, src: string, where: string): string {
  const literal = goString(expr);
  if (literal !== undefined) return literal;
  const ident = expr.replace(/^\w+\./, "");
  const m = new RegExp(`\\b${ident}\\s*=\\s*("[^"]*")`).exec(src);
  if (m?.[1]) return goString(m[1])!;
  throw new Error(`${where}: flag name ${expr} is not a literal or a constant of this file`);
}

/** A literal default as it would be written on the command line, or `undefined` when not a literal. */
function literalDefault(expr: string): string | undefined {
  const s = goString(expr);
  if (s !== undefined) return s;
  if (/^(true|false|-?\d+(\.\d+)?)$/.test(expr)) return expr;
  if (expr === "nil") return "";
  const slice = /^\[\](?:string|int)\{(.*)\}$/s.exec(expr);
  if (slice) {
    const items = slice[1]!.split(",").map((x) => x.trim()).filter((x) => x !== "");
    return items.map((x) => goString(x) ?? x).join(",");
  }
  return undefined;
}

function valueType(expr: string, name: string, where: string): string {
  const hit = VALUE_TYPES.find(([prefix]) =>
    expr === prefix || (prefix.endsWith("(") && expr.startsWith(prefix))
  );
  if (!hit) {
    throw new Error(`${where}: --${name} has a value of unknown type (${expr}): add it to VALUE_TYPES`);
  }
  return hit[1];
}

function resolveDefault(name: string, expr: string, where: string): string {
  const literal = literalDefault(expr);
  const resolved = RESOLVED[name];
  if (resolved && resolved[0] === expr) return resolved[1];
  if (literal !== undefined && !resolved) return literal;
  if (resolved) {
    throw new Error(`${where}: --${name} default is now ${expr}, not ${resolved[0]}: read it again`);
  }
  throw new Error(`${where}: --${name} default ${expr} is not a literal: add it to RESOLVED`);
}

/** The `if` blocks of a function body: condition and the range of the block. */
function ifBlocks(body: string): { cond: string; open: number; close: number }[] {
  return [...body.matchAll(/\bif\s+([^{]*?)\s*\{/g)].map((m) => {
    const open = m.index! + m[0].length - 1;
    return { cond: m[1]!.trim(), open, close: closing(body, open) };
  });
}

/** Whether the registration at `at` is made in the Go CCM's binary: every `if` around it must hold there. */
async function registered(body: string, at: number, name: string, from: string): Promise<boolean> {
  for (const block of ifBlocks(body).filter((b) => b.open < at && at < b.close)) {
    const holds = CONDITIONS[block.cond];
    if (!holds) {
      throw new Error(`${from}: --${name} is registered only if ${block.cond}: add it to CONDITIONS`);
    }
    if (!(await holds())) return false;
  }
  return true;
}

/** The flags registered in one source's functions, and the names marked deprecated or hidden there. */
async function scan(src: string, funcs: readonly string[], from: string): Promise<Row[]> {
  const code = stripComments(src);
  const rows: Row[] = [];
  for (const signature of funcs) {
    const body = funcBody(code, signature, from);
    for (const m of body.matchAll(/\.([A-Z]\w*)\(/g)) {
      const method = METHODS[m[1]!];
      if (!method) continue;
      const a = args(body, m.index! + m[0].length - 1);
      if (a.length <= method.name) continue; // e.g. flag.Lookup(name).NoOptDefVal, not a registration
      const name = flagName(a[method.name]!, code, from);
      const type = method.type === "var" ? valueType(a[0]!, name, from) : method.type;
      const def = method.def === undefined
        ? VAR_DEFAULTS[name] ?? fail(`${from}: --${name} default unknown: add it to VAR_DEFAULTS`)
        : resolveDefault(name, a[method.def]!, from);
      if (await registered(body, m.index!, name, from)) rows.push({ name, type, def, from });
    }
    for (const m of body.matchAll(/\.Mark(Deprecated|Hidden)\(\s*("[^"]+")/g)) {
      const row = rows.find((r) => r.name === goString(m[2]!));
      if (!row) continue; // a flag left out by a condition
      if (m[1] === "Deprecated") row.deprecated = true;
      else row.hidden = true;
    }
  }
  return rows;
}

function fail(message: string): never {
  throw new Error(message);
}

/** The values the Go CCM's main sets on upstream flags before parsing: flag → value. */
function goCcmSets(main: string): Map<string, string> {
  const body = funcBody(stripComments(main), "func main", "main.go");
  const out = new Map<string, string>();
  for (const m of body.matchAll(/case\s+((?:"[^"]+"\s*,?\s*)+):\s*err\s*=\s*fl\.Value\.Set\(([^)]+)\)/g)) {
    const value = GO_CCM_SETS[m[2]!.trim()] ?? fail(`main.go: sets a flag to ${m[2]}: add it to GO_CCM_SETS`);
    for (const n of m[1]!.matchAll(/"([^"]+)"/g)) out.set(n[1]!, value);
  }
  return out;
}

async function checkWiring(): Promise<void> {
  for (const [module, path, text] of WIRING) {
    const code = stripComments(await show(module, path)).replace(/\s+/g, " ");
    if (!code.includes(text.replace(/\s+/g, " "))) {
      throw new Error(
        `${MODULES[module].name} ${path} no longer has "${text}": upstream changed, read it again`,
      );
    }
  }
}

/** Every flag of the Go CCM's command, sorted by name. */
export async function upstreamFlags(): Promise<Row[]> {
  await checkWiring();
  const rows: Row[] = [VERSION_ROW];
  for (const [module, path, ...funcs] of SOURCES) {
    const from = `${MODULES[module].name} ${path}`;
    rows.push(...await scan(await show(module, path), funcs, from));
  }
  const seen = new Set<string>();
  for (const r of rows) {
    if (seen.has(r.name)) throw new Error(`--${r.name} is registered twice (pflag would panic)`);
    seen.add(r.name);
  }
  const sets = goCcmSets(await show("go", "main.go"));
  for (const [name, value] of sets) {
    const row = rows.find((r) => r.name === name) ?? fail(`main.go sets unknown flag --${name}`);
    row.goCcmSets = value;
  }
  return rows.sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * The variables an `os.Getenv(expr)` reads: a literal, a constant of the file, or the parameter of a helper
 * (`func envBoolOptions(o string)`), whose callers in the file name the variables.
 */
function envNames(expr: string, src: string, from: string): string[] {
  const literal = goString(expr);
  if (literal !== undefined) return [literal];
  const helper = new RegExp(`func (\\w+)\\(\\s*${expr} string\\)`).exec(src);
  if (!helper) return [flagName(expr, src, from)];
  return [...src.matchAll(new RegExp(`\\b${helper[1]}\\(\\s*"([A-Z][A-Z0-9_]*)"`, "g"))].map((m) => m[1]!);
}

/** The environment variables the Go CCM reads, sorted, each with the file that reads it. */
export async function goCcmEnv(): Promise<{ name: string; from: string }[]> {
  const out = new Map<string, string>();
  for (const [module, path, ...funcs] of ENV_SOURCES) {
    const src = stripComments(await show(module, path));
    const code = funcs.length === 0 ? src : funcs.map((f) => funcBody(src, f, path)).join("\n");
    const from = `${MODULES[module].name} ${path}`;
    for (const m of code.matchAll(/os\.(?:Getenv|LookupEnv)\(\s*([^)]+?)\s*\)/g)) {
      for (const name of envNames(m[1]!, src, from)) if (!out.has(name)) out.set(name, from);
    }
  }
  return [...out].map(([name, from]) => ({ name, from })).sort((a, b) => a.name.localeCompare(b.name));
}

/** One flag as a row of the generated file: name, type, default, source index, and a mark. */
function tsRow(r: Row, sources: readonly string[]): string {
  const mark = r.deprecated ? ', "deprecated"' : r.hidden ? ', "hidden"' : "";
  return `  [${JSON.stringify(r.name)}, ${JSON.stringify(r.type)}, ${JSON.stringify(r.def)}, ${
    sources.indexOf(r.from)
  }${mark}],`;
}

/** The text of config/upstream_flags.ts. */
export async function upstreamFlagsModule(): Promise<string> {
  const revisions = await Promise.all(
    (Object.keys(MODULES) as Module[]).map(async (m) => ` *   ${MODULES[m].name} ${await revision(m)}`),
  );
  const flags = await upstreamFlags();
  const env = await goCcmEnv();
  const sources = [...new Set(flags.map((f) => f.from))];
  const sets = flags.filter((f) => f.goCcmSets !== undefined);
  const envSources = [...new Set(env.map((e) => e.from))];
  return `/**
 * Every flag the Go CCM's binary accepts and every environment variable it reads. Generated by
 * tests/upstream_flags_gen.ts from:
${revisions.join("\n")}
 * Do not edit: run the generator (docs/development.md).
 */

/** pflag's value types among the upstream flags. */
export type UpstreamFlagType =
${[...new Set(flags.map((f) => f.type))].sort().map((t) => `  | ${JSON.stringify(t)}`).join("\n")};

/** One upstream flag. */
export interface UpstreamFlag {
  readonly name: string;
  /** pflag's value type. */
  readonly type: UpstreamFlagType;
  /** The default as it would be written on the command line (lists comma-separated). */
  readonly def: string;
  /** The module and file that register it. */
  readonly from: string;
  readonly deprecated: boolean;
  readonly hidden: boolean;
  /** The value the Go CCM's main sets before parsing, if any. */
  readonly goCcmSets?: string;
}

const SOURCES = [
${sources.map((x) => `  ${JSON.stringify(x)},`).join("\n")}
] as const;

type Row = readonly [name: string, type: UpstreamFlagType, def: string, source: number, mark?: "deprecated" | "hidden"];

const ROWS: readonly Row[] = [
${flags.map((f) => tsRow(f, sources)).join("\n")}
];

const GO_CCM_SETS: Readonly<Record<string, string>> = {
${sets.map((f) => `  ${JSON.stringify(f.name)}: ${JSON.stringify(f.goCcmSets)},`).join("\n")}
};

/** The flags, by name. */
export const UPSTREAM_FLAGS: readonly UpstreamFlag[] = ROWS.map(([name, type, def, source, mark]) => ({
  name,
  type,
  def,
  from: SOURCES[source] ?? "",
  deprecated: mark === "deprecated",
  hidden: mark === "hidden",
  ...(GO_CCM_SETS[name] === undefined ? {} : { goCcmSets: GO_CCM_SETS[name] }),
}));

const ENV_SOURCES = [
${envSources.map((x) => `  ${JSON.stringify(x)},`).join("\n")}
] as const;

const ENV_ROWS: readonly (readonly [name: string, source: number])[] = [
${env.map((e) => `  [${JSON.stringify(e.name)}, ${envSources.indexOf(e.from)}],`).join("\n")}
];

/** The environment variables the Go CCM reads (its own code and linodego's client), by name. */
export const GO_CCM_ENV: readonly { readonly name: string; readonly from: string }[] = ENV_ROWS.map((
  [name, source],
) => ({ name, from: ENV_SOURCES[source] ?? "" }));
`;
}

if (import.meta.main) {
  if (Deno.args[0]) mirrors = Deno.args[0];
  const path = new URL("../config/upstream_flags.ts", import.meta.url);
  Deno.writeTextFileSync(path, await upstreamFlagsModule());
  const config = new URL("../deno.json", import.meta.url).pathname;
  const fmt = await new Deno.Command(Deno.execPath(), {
    args: ["fmt", "--quiet", "--config", config, path.pathname],
  })
    .output();
  if (!fmt.success) throw new Error(`deno fmt failed on ${path.pathname}`);
}
