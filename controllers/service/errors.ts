/**
 * The errors of the service controller's pure planning: a bad annotation, or a Service the planner cannot
 * turn into a NodeBalancer. Both are bad user input (`InvalidInputError`): retrying cannot help until the
 * Service, its Secret or the Nodes change, and their messages are fit for a Warning Event as they are.
 */
import { InvalidInputError } from "../loop/runtime.ts";

/** Longest annotation value quoted in a message; the full value stays on `value`. */
const MAX_QUOTED_CHARS = 120;

function quote(value: string): string {
  const short = value.length > MAX_QUOTED_CHARS ? `${value.slice(0, MAX_QUOTED_CHARS)}…` : value;
  return JSON.stringify(short);
}

/** One annotation whose value is not accepted, with the text of what is. */
export class InvalidAnnotationError extends InvalidInputError {
  override name = "InvalidAnnotationError";
  /** The full annotation name, e.g. `service.beta.kubernetes.io/linode-loadbalancer-throttle`. */
  readonly key: string;
  /** The value as written on the Service. */
  readonly value: string;
  /** What is accepted, as a person reads it: `whole seconds from 2 to 3600`. */
  readonly accepted: string;

  constructor(key: string, value: string, accepted: string) {
    super(`Invalid annotation ${key}=${quote(value)}: expected ${accepted}`);
    this.key = key;
    this.value = value;
    this.accepted = accepted;
  }
}

/** Why a valid set of annotations still gives no NodeBalancer for this Service (yet). */
export type PlanProblem =
  | "UnsupportedServicePort"
  | "MissingNodePort"
  | "MissingTlsSecret"
  | "InvalidTlsSecret"
  | "NoEligibleNodes"
  | "UnresolvedSubnet"
  | "MissingUid";

/** A Service the planner cannot turn into a NodeBalancer: no annotation is at fault, or not only one. */
export class ServicePlanError extends InvalidInputError {
  override name = "ServicePlanError";
  /** A stable code for metrics and tests. */
  readonly problem: PlanProblem;

  constructor(problem: PlanProblem, message: string) {
    super(message);
    this.problem = problem;
  }
}
