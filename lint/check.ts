/**
 * Checks Services with the service controller's own annotation parser (`parseServiceAnnotations`), so `lint`
 * says exactly what the controller would: each invalid annotation with what it accepts, the warnings the
 * controller would log, and (`--from-go-ccm`) the defaults this CCM applies differently from the Go CCM. Pure.
 */
import type { V1Service } from "@kubernetes/client-node";
import { annotationKey, DEFAULT_THROTTLE } from "../controllers/service/annotations/table.ts";
import { parseServiceAnnotations } from "../controllers/service/annotations/parse.ts";
import type { ServiceDefaults } from "../controllers/service/annotations/spec.ts";
import type { FoundService } from "./manifests.ts";

/** How much a finding matters: only errors fail the lint. */
export type FindingLevel = "error" | "warning" | "note";

/** One thing to tell about one Service. */
export interface Finding {
  readonly level: FindingLevel;
  readonly where: string;
  /** `namespace/name`. */
  readonly service: string;
  readonly text: string;
}

/** The outcome of a lint. */
export interface LintReport {
  readonly findings: readonly Finding[];
  /** LoadBalancer Services checked. */
  readonly checked: number;
  /** Services with at least one invalid annotation. */
  readonly invalid: number;
}

/** A default where this CCM and the Go CCM's code disagree, and the annotation value that keeps the Go CCM's. */
export interface DefaultDifference {
  readonly name: string;
  readonly goCcm: string;
  readonly ours: string;
  /** Whether the difference applies to this Service (e.g. passive checks never apply to UDP-only ones). */
  applies(svc: V1Service): boolean;
}

/** The defaults that differ: the Go CCM's code (since its PR #189) against its README, which this CCM follows. */
export const DEFAULT_DIFFERENCES: readonly DefaultDifference[] = Object.freeze([
  { name: "throttle", goCcm: "0", ours: String(DEFAULT_THROTTLE), applies: () => true },
  {
    name: "check-passive",
    goCcm: "true",
    ours: "false",
    applies: (svc: V1Service) => (svc.spec?.ports ?? []).some((p) => (p.protocol ?? "TCP") !== "UDP"),
  },
]);

function keyOf(svc: V1Service): string {
  return `${svc.metadata?.namespace ?? "default"}/${svc.metadata?.name ?? ""}`;
}

function hasOurAnnotations(svc: V1Service): boolean {
  return Object.keys(svc.metadata?.annotations ?? {}).some((k) => k.startsWith(annotationKey("")));
}

function differences(svc: V1Service): string[] {
  const annotations = svc.metadata?.annotations ?? {};
  return DEFAULT_DIFFERENCES.filter((d) => d.applies(svc) && annotations[annotationKey(d.name)] === undefined)
    .map((d) =>
      `${annotationKey(d.name)} not set: this CCM applies ${d.ours} where the Go CCM applied ${d.goCcm}; ` +
      `set it to "${d.goCcm}" to keep the Go CCM's behaviour`
    );
}

/** Checks one Service; returns its findings (none for a valid Service that is not asked about defaults). */
function checkService(found: FoundService, defaults: ServiceDefaults, fromGoCcm: boolean): Finding[] {
  const svc = found.service;
  const at = (level: FindingLevel, text: string): Finding => ({
    level,
    where: found.where,
    service: keyOf(svc),
    text,
  });
  if (svc.spec?.type !== "LoadBalancer") {
    return hasOurAnnotations(svc)
      ? [
        at(
          "warning",
          `type ${svc.spec?.type ?? "ClusterIP"}: its linode-loadbalancer annotations do nothing`,
        ),
      ]
      : [];
  }
  const result = parseServiceAnnotations(svc, defaults);
  const errors = result.ok
    ? []
    : result.errors.map((e) => at("error", `${e.key}=${JSON.stringify(e.value)}: expected ${e.accepted}`));
  // The controller goes on with these (as the Go CCM reads them), but they are still not what is accepted.
  const lenient = (result.ok ? result.spec.lenient : result.lenient).map((l) => at("error", l.message));
  const warnings = (result.ok ? result.spec.warnings : result.warnings).map((w) =>
    at("warning", `${w.key}: ${w.message}`)
  );
  const notes = fromGoCcm ? differences(svc).map((text) => at("note", text)) : [];
  return [...errors, ...lenient, ...warnings, ...notes];
}

/** Checks every Service found. */
export function lintServices(
  found: readonly FoundService[],
  defaults: ServiceDefaults,
  options: { fromGoCcm?: boolean } = {},
): LintReport {
  const findings = found.flatMap((f) => checkService(f, defaults, options.fromGoCcm ?? false));
  const invalid = new Set(findings.filter((f) => f.level === "error").map((f) => `${f.where} ${f.service}`));
  return {
    findings,
    checked: found.filter((f) => f.service.spec?.type === "LoadBalancer").length,
    invalid: invalid.size,
  };
}

/** The report as lines: one per finding, then a summary. */
export function formatReport(report: LintReport): string[] {
  const lines = report.findings.map((f) => `${f.where}: ${f.service}: ${f.level}: ${f.text}`);
  const count = (level: FindingLevel) => report.findings.filter((f) => f.level === level).length;
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;
  const errors = count("error");
  const verdict = errors === 0
    ? "every annotation is valid"
    : `${plural(errors, "invalid annotation")} in ${plural(report.invalid, "Service")}`;
  const extra = [
    count("warning") ? plural(count("warning"), "warning") : "",
    count("note") ? plural(count("note"), "note") : "",
  ]
    .filter(Boolean);
  lines.push(
    `checked ${plural(report.checked, "LoadBalancer Service")}: ${verdict}${
      extra.length ? `, ${extra.join(", ")}` : ""
    }`,
  );
  return lines;
}
