import { randomUUID } from "node:crypto";

/** Which sandbox server a fault rule applies to. */
export type FaultTarget = "arm" | "cosmos" | "token" | "entra" | "dataPlane";

/**
 * What a fault does to a matching request.
 *
 * - `throttle`: 429. ARM sends `Retry-After: <retryAfterSeconds>` (default 1); Cosmos sends
 *   `x-ms-retry-after-ms: <retryAfterInMs>` (default 10). The token endpoint sends `Retry-After`.
 * - `unavailable`: 503, with a Retry-After header only when `retryAfterSeconds` / `retryAfterInMs` is set.
 * - `status`: any `statusCode` with an error body of `errorCode` and `message`.
 * - `connectionReset`: the socket is destroyed without an answer.
 * - `delay`: waits `delayInMs`, then the request is handled normally (combines with one other fault).
 * - `noProperties`: ARM only; a 200 identity body without `properties`.
 * - `race`: Cosmos writes only; before the write, a foreign edit is applied to the stored document
 *   so its etag changes and an `If-Match` write gets 412.
 * - `deleteBeforeWrite`: Cosmos writes only; the stored document is deleted before the write.
 * - `resetAfterWrite`: Cosmos writes only; the write is applied as Cosmos applies it (or refused,
 *   a 412 as any other), then the connection is dropped before its answer leaves, so the writer
 *   cannot tell whether it landed.
 * - `noExplicitIdentities`: data plane only; a 200 answer without `explicit_identities`.
 * - `unusableCertificate`: data plane only; a 200 answer whose `client_secret` is no certificate bundle.
 * - `bareStatus`: ARM and data plane; `statusCode` with a body that is no Azure error (`body`, plain
 *   text, empty by default), as an endpoint that does not route to the service answers.
 * - `malformedAnswer`: ARM and data plane; the 200 answer with `answerEdits` applied (answerEdits.ts):
 *   a field of another type, a missing field, an entry missing or for an identity not asked for.
 */
export type FaultKind =
  | "throttle"
  | "unavailable"
  | "status"
  | "connectionReset"
  | "delay"
  | "noProperties"
  | "race"
  | "deleteBeforeWrite"
  | "resetAfterWrite"
  | "noExplicitIdentities"
  | "unusableCertificate"
  | "bareStatus"
  | "malformedAnswer";

/**
 * One change a `malformedAnswer` fault makes to a 200 answer (answerEdits.ts):
 *
 * - `set` / `remove`: the value at `pointer`, a JSON pointer into the ARM identity body, or into one
 *   entry of the data plane's `explicit_identities` (into the whole answer with `within: "answer"`);
 * - `dropEntry` (data plane): the entry is left out of the answer;
 * - `addEntry` (data plane): a copy of the entry, answering for `resourceId`, is added.
 *
 * Data plane edits apply to the entry answering for `identityId` (case-insensitive), or to the first.
 */
export type AnswerEdit =
  | { readonly op: "set"; readonly pointer: string; readonly value: unknown; readonly identityId?: string; readonly within?: "entry" | "answer" }
  | { readonly op: "remove"; readonly pointer: string; readonly identityId?: string; readonly within?: "entry" | "answer" }
  | { readonly op: "dropEntry"; readonly identityId?: string }
  | { readonly op: "addEntry"; readonly resourceId: string; readonly identityId?: string };

/** Which requests a rule applies to. Every given field must match; an empty match matches all. */
export interface FaultMatch {
  /** Cosmos: the document id (from the URL, or the body of a create); a batch of reads matches when it reads it. */
  documentId?: string;
  /** ARM: the identity's full ARM ID, compared case-insensitively. */
  resourceId?: string;
  /** A case-insensitive substring of the request path (without the query string). */
  pathContains?: string;
  /** The HTTP method, case-insensitive. */
  method?: string;
  /** Cosmos: document reads, document writes, or any request (default). */
  operation?: "read" | "write" | "any";
  /** Entra: the tenant of the token request (case-insensitive). */
  tenantId?: string;
  /** Entra: the client ID of the token request (case-insensitive). */
  clientId?: string;
  /** Data plane: the cluster whose identity URL was called, its full ARM ID (case-insensitive). */
  clusterResourceId?: string;
  /** Data plane: an identity the request's `identityIds` names, its full ARM ID (case-insensitive). */
  requestedIdentityId?: string;
}

/** A set-at-JSON-pointer edit applied by a `race` fault. */
export interface ForeignEdit {
  /** A JSON pointer into the document, e.g. `/properties/futureField/editedBy`. */
  path: string;
  /** The value to set there. */
  value: unknown;
}

/** A fault rule as submitted. Without `count` and `probability`, the rule fires once. */
export interface FaultRuleInput {
  target: FaultTarget;
  kind: FaultKind;
  match?: FaultMatch;
  /** Fire on the next N matching requests. With `probability`, caps the number of firings. */
  count?: number;
  /** Fire on each matching request with this probability (0..1). */
  probability?: number;
  /** Seed for the rule's own random generator, for repeatable probabilistic faults. */
  seed?: number;
  retryAfterSeconds?: number;
  retryAfterInMs?: number;
  statusCode?: number;
  errorCode?: string;
  message?: string;
  delayInMs?: number;
  /** For `race`: the edit to apply. Default: increment `/properties/sandboxForeignEditCount`. */
  foreignEdit?: ForeignEdit;
  /** For `bareStatus`: the plain-text body (empty when absent). */
  body?: string;
  /** For `malformedAnswer`: the changes, in order. */
  answerEdits?: AnswerEdit[];
}

/** A stored rule with its bookkeeping. */
export interface FaultRule extends FaultRuleInput {
  id: string;
  /** How many times the rule has fired. */
  triggered: number;
  /** Firings left, or null when unlimited (probability without count). */
  remaining: number | null;
}

/** What the servers know about a request when they ask for faults. */
export interface FaultRequestContext {
  target: FaultTarget;
  method: string;
  path: string;
  documentId?: string;
  /** Every document a batch request reads; a rule for any of them applies to the whole batch. */
  documentIds?: readonly string[];
  resourceId?: string;
  operation?: "read" | "write" | "other";
  tenantId?: string;
  clientId?: string;
  clusterResourceId?: string;
  /** Data plane: the identities the request's body names. */
  requestedIdentityIds?: readonly string[];
}

/** The faults that fired for one request. */
export interface FiredFaults {
  /** Total extra delay from global latency and `delay` rules, in milliseconds. */
  delayInMs: number;
  /** The first non-delay rule that fired, if any. */
  rule?: FaultRule;
}

/** Global per-target latency in milliseconds. */
export type LatencySettings = Record<FaultTarget, number>;

/** Thrown for a rule that cannot be added. */
export class FaultRuleError extends Error {
  override readonly name = "FaultRuleError";
}

const targets: readonly FaultTarget[] = ["arm", "cosmos", "token", "entra", "dataPlane"];
const kinds: readonly FaultKind[] = [
  "throttle",
  "unavailable",
  "status",
  "connectionReset",
  "delay",
  "noProperties",
  "race",
  "deleteBeforeWrite",
  "resetAfterWrite",
  "noExplicitIdentities",
  "unusableCertificate",
  "bareStatus",
  "malformedAnswer",
];

/** The kinds that act on Cosmos writes only. */
const cosmosWriteKinds: ReadonlySet<FaultKind> = new Set(["race", "deleteBeforeWrite", "resetAfterWrite"]);

/**
 * A small seeded generator (mulberry32), so probabilistic faults can be replayed.
 *
 * @param seed - Any 32-bit integer.
 * @returns A function giving numbers in [0, 1).
 */
export function createSeededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = Math.imul(state ^ (state >>> 15), 1 | state);
    value = (value + Math.imul(value ^ (value >>> 7), 61 | value)) ^ value;
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}

function validate(input: FaultRuleInput): void {
  if (!targets.includes(input.target)) {
    throw new FaultRuleError(`target must be one of ${targets.join(", ")}`);
  }
  if (!kinds.includes(input.kind)) {
    throw new FaultRuleError(`kind must be one of ${kinds.join(", ")}`);
  }
  if (input.kind === "noProperties" && input.target !== "arm") {
    throw new FaultRuleError("noProperties applies to the arm target only");
  }
  if (cosmosWriteKinds.has(input.kind) && input.target !== "cosmos") {
    throw new FaultRuleError(`${input.kind} applies to the cosmos target only`);
  }
  if ((input.kind === "noExplicitIdentities" || input.kind === "unusableCertificate") && input.target !== "dataPlane") {
    throw new FaultRuleError(`${input.kind} applies to the dataPlane target only`);
  }
  if ((input.kind === "status" || input.kind === "bareStatus") && (input.statusCode === undefined || input.statusCode < 400)) {
    throw new FaultRuleError(`${input.kind} faults need a statusCode of 400 or more`);
  }
  if ((input.kind === "bareStatus" || input.kind === "malformedAnswer") && input.target !== "arm" && input.target !== "dataPlane") {
    throw new FaultRuleError(`${input.kind} applies to the arm and dataPlane targets only`);
  }
  if (input.kind === "malformedAnswer") validateAnswerEdits(input);
  if (input.count !== undefined && (!Number.isInteger(input.count) || input.count < 1)) {
    throw new FaultRuleError("count must be a positive integer");
  }
  if (input.probability !== undefined && !(input.probability >= 0 && input.probability <= 1)) {
    throw new FaultRuleError("probability must be between 0 and 1");
  }
}

const answerEditOps = ["set", "remove", "dropEntry", "addEntry"];

function validateAnswerEdits(input: FaultRuleInput): void {
  const edits = input.answerEdits;
  if (!Array.isArray(edits) || edits.length === 0) {
    throw new FaultRuleError("malformedAnswer faults need answerEdits, a non-empty array");
  }
  for (const edit of edits as unknown[]) {
    const candidate = (typeof edit === "object" && edit !== null ? edit : {}) as Record<string, unknown>;
    if (!answerEditOps.includes(candidate.op as string)) {
      throw new FaultRuleError(`each answerEdits entry needs op, one of ${answerEditOps.join(", ")}`);
    }
    if ((candidate.op === "set" || candidate.op === "remove") && (typeof candidate.pointer !== "string" || !candidate.pointer.startsWith("/"))) {
      throw new FaultRuleError(`answerEdits '${candidate.op as string}' needs pointer, a JSON pointer starting with '/'`);
    }
    if (candidate.op === "set" && !("value" in candidate)) {
      throw new FaultRuleError("answerEdits 'set' needs value");
    }
    if (candidate.op === "addEntry" && typeof candidate.resourceId !== "string") {
      throw new FaultRuleError("answerEdits 'addEntry' needs resourceId");
    }
    if (input.target === "arm" && candidate.op !== "set" && candidate.op !== "remove") {
      throw new FaultRuleError(`answerEdits '${candidate.op as string}' applies to the dataPlane target only`);
    }
  }
}

function matches(rule: FaultRule, context: FaultRequestContext): boolean {
  if (rule.target !== context.target) {
    return false;
  }
  if (cosmosWriteKinds.has(rule.kind) && context.operation !== "write") {
    return false;
  }
  const match = rule.match ?? {};
  if (match.documentId !== undefined && match.documentId !== context.documentId && !(context.documentIds ?? []).includes(match.documentId)) {
    return false;
  }
  if (match.resourceId !== undefined && match.resourceId.toLowerCase() !== context.resourceId?.toLowerCase()) {
    return false;
  }
  const sameText = (wanted: string | undefined, actual: string | undefined): boolean => wanted === undefined || wanted.toLowerCase() === actual?.toLowerCase();
  if (
    !sameText(match.tenantId, context.tenantId) ||
    !sameText(match.clientId, context.clientId) ||
    !sameText(match.clusterResourceId, context.clusterResourceId)
  ) {
    return false;
  }
  const requested = match.requestedIdentityId?.toLowerCase();
  if (requested !== undefined && !(context.requestedIdentityIds ?? []).some((id) => id.toLowerCase() === requested)) {
    return false;
  }
  if (match.pathContains !== undefined && !context.path.toLowerCase().includes(match.pathContains.toLowerCase())) {
    return false;
  }
  if (match.method !== undefined && match.method.toUpperCase() !== context.method.toUpperCase()) {
    return false;
  }
  if (match.operation !== undefined && match.operation !== "any" && match.operation !== context.operation) {
    return false;
  }
  return true;
}

/**
 * Holds fault rules and global latency for all sandbox servers, and decides per request which
 * faults fire. Rules are checked in the order they were added.
 */
export class FaultInjector {
  private rules: FaultRule[] = [];
  private readonly randomByRule = new Map<string, () => number>();
  private readonly latency: LatencySettings = { arm: 0, cosmos: 0, token: 0, entra: 0, dataPlane: 0 };

  /**
   * Adds a rule.
   *
   * @param input - The rule.
   * @returns The stored rule with its id.
   * @throws FaultRuleError when the rule is invalid.
   */
  add(input: FaultRuleInput): FaultRule {
    validate(input);
    const unlimited = input.count === undefined && input.probability !== undefined;
    const rule: FaultRule = { ...input, id: randomUUID(), triggered: 0, remaining: unlimited ? null : (input.count ?? 1) };
    this.rules.push(rule);
    this.randomByRule.set(rule.id, input.seed === undefined ? Math.random : createSeededRandom(input.seed));
    return rule;
  }

  /** @returns Copies of the current rules, including exhausted ones. */
  list(): FaultRule[] {
    return this.rules.map((rule) => ({ ...rule }));
  }

  /**
   * Removes rules.
   *
   * @param target - Only remove rules for this target; all when omitted.
   * @returns How many rules were removed.
   */
  clear(target?: FaultTarget): number {
    const before = this.rules.length;
    this.rules = this.rules.filter((rule) => target !== undefined && rule.target !== target);
    return before - this.rules.length;
  }

  /** @returns The global latency per target. */
  getLatency(): LatencySettings {
    return { ...this.latency };
  }

  /**
   * Sets global latency added to every request of a target.
   *
   * @param settings - Milliseconds per target; omitted targets keep their value.
   */
  setLatency(settings: Partial<LatencySettings>): void {
    for (const target of targets) {
      const value = settings[target];
      if (value !== undefined) {
        if (!Number.isFinite(value) || value < 0) {
          throw new FaultRuleError(`latency for ${target} must be a non-negative number`);
        }
        this.latency[target] = value;
      }
    }
  }

  /**
   * Decides which faults fire for a request and consumes their counts.
   *
   * @param context - What the server knows about the request.
   * @returns The total delay and the first terminal rule that fired.
   */
  take(context: FaultRequestContext): FiredFaults {
    const fired: FiredFaults = { delayInMs: this.latency[context.target] };
    for (const rule of this.rules) {
      if (rule.remaining === 0 || (rule.kind !== "delay" && fired.rule !== undefined) || !matches(rule, context)) {
        continue;
      }
      const random = this.randomByRule.get(rule.id) ?? Math.random;
      if (rule.probability !== undefined && random() >= rule.probability) {
        continue;
      }
      rule.triggered += 1;
      if (rule.remaining !== null) {
        rule.remaining -= 1;
      }
      if (rule.kind === "delay") {
        fired.delayInMs += rule.delayInMs ?? 0;
      } else {
        fired.rule = rule;
      }
    }
    return fired;
  }
}
