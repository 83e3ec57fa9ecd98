/**
 * The faults the campaign injects, each as a sandbox rule scoped to one lane (its resource group
 * for ARM, its document for Cosmos), so lanes can run side by side. Token-endpoint requests carry
 * nothing that names a lane, so token faults run in a phase of their own. Faults of a delete and
 * faults of the settings (a container that does not exist) have phases of their own too.
 */
import type { FaultRuleInput } from "../../sandbox/faultInjector";
import type { Sandbox } from "../../sandbox/sandbox";

/** JSON pointer of the subtree this hook owns in the ServiceProviderCluster document. */
export const ownedSubtreePointer = "/properties/status/dataPlaneOperatorsManagedIdentities";

/** One token of a JSON pointer, escaped (RFC 6901): identity keys hold '/'. */
export function escapePointerToken(token: string): string {
  return token.replace(/~/g, "~0").replace(/\//g, "~1");
}

/** What a fault rule is scoped to. */
export interface FaultScope {
  /** Lowercased `/resourcegroups/<name>/` of the lane's identities. */
  readonly resourceGroupPath: string;
  /** The lane's ServiceProviderCluster document id. */
  readonly documentId: string;
  /** One of the lane's identity IDs, for single-identity faults. */
  readonly identityId: string;
  /** A unique marker for foreign edits raced in by this pass. */
  readonly passNumber: number;
  /**
   * What another writer that read ARM just now would record for each of the lane's identities,
   * keyed by lowercase ID: its current clientId/principalId, or a ResourceNotFound failure.
   */
  readonly freshEntries: Readonly<Record<string, Readonly<Record<string, string>>>>;
  /** When the rules were built: another writer's recheck time lies after it. */
  readonly now: Date;
}

/** One kind of fault, named as the report lists it. */
export interface FaultKindSpecification {
  readonly name: string;
  readonly target: "arm" | "cosmos" | "token";
  readonly description: string;
  /** Relative frequency among the faults of its phase. */
  readonly weight: number;
  /** Not about one identity: a pass with this fault alone must end as a global failure (nothing written). */
  readonly global?: true;
  /**
   * Rotate the fault's identity in ARM before the rules are built (as if it had been deleted and
   * recreated), so the values another writer records now differ from the stored ones.
   */
  readonly rotatesIdentityFirst?: true;
  rule(scope: FaultScope, maxWriteAttempts: number, lookupTimeoutInMs: number): FaultRuleInput;
  /**
   * A second rule added with the first that sets the scene for it (the failed lookup beside which
   * another writer records a fresh value). Times fired counts the first rule only.
   */
  alongside?(scope: FaultScope, maxWriteAttempts: number, lookupTimeoutInMs: number): FaultRuleInput;
}

/**
 * The complete, current status another writer (upstream's controller, another stack or shard)
 * records: every identity of the lane as ARM has it now, and a recheck time 13 h away.
 */
export function completeStatusOf(scope: FaultScope): Record<string, unknown> {
  const recheck = new Date(scope.now.getTime() + 13 * 60 * 60 * 1000);
  return { identities: structuredClone(scope.freshEntries), earliestRecheckTime: `${recheck.toISOString().slice(0, 19)}Z` };
}

const arm = (scope: FaultScope, rest: Omit<FaultRuleInput, "target" | "match">, wholeLane = false): FaultRuleInput => ({
  target: "arm",
  match: wholeLane ? { pathContains: scope.resourceGroupPath } : { resourceId: scope.identityId },
  ...rest,
});
const cosmos = (scope: FaultScope, rest: Omit<FaultRuleInput, "target" | "match">, operation: "read" | "write" | "any" = "any"): FaultRuleInput => ({
  target: "cosmos",
  match: { documentId: scope.documentId, operation },
  ...rest,
});

/** Faults with a lane scope (ARM and Cosmos). */
export const laneFaultKinds: readonly FaultKindSpecification[] = [
  {
    name: "arm-429-retry-after-1",
    target: "arm",
    weight: 3,
    description: "ARM 429 with Retry-After: 1, once (the hook waits and retries)",
    rule: (scope) => arm(scope, { kind: "throttle", retryAfterSeconds: 1 }),
  },
  {
    name: "arm-429-retry-after-0-persistent",
    target: "arm",
    weight: 3,
    description: "ARM 429 with Retry-After: 0 on every try (the hook gives up after its attempts)",
    rule: (scope) => arm(scope, { kind: "throttle", retryAfterSeconds: 0, count: 6 }),
  },
  {
    name: "arm-429-without-retry-after",
    target: "arm",
    weight: 3,
    description: "ARM 429 without Retry-After",
    rule: (scope) => arm(scope, { kind: "status", statusCode: 429, errorCode: "TooManyRequests", message: "throttled" }),
  },
  {
    name: "arm-500",
    target: "arm",
    weight: 3,
    description: "ARM 500 once (exponential retry)",
    rule: (scope) =>
      arm(scope, {
        kind: "status",
        statusCode: 500,
        errorCode: "InternalServerError",
        message: "simulated failure\n  at line two https://management.azure.com/x",
      }),
  },
  { name: "arm-503", target: "arm", weight: 2, description: "ARM 503 without Retry-After, once", rule: (scope) => arm(scope, { kind: "unavailable" }) },
  {
    name: "arm-503-retry-after-0",
    target: "arm",
    weight: 2,
    description: "ARM 503 with Retry-After: 0 for the whole lane, twice",
    rule: (scope) => arm(scope, { kind: "unavailable", retryAfterSeconds: 0, count: 2 }, true),
  },
  {
    name: "arm-connection-reset",
    target: "arm",
    weight: 3,
    description: "ARM connection reset once",
    rule: (scope) => arm(scope, { kind: "connectionReset" }),
  },
  {
    name: "arm-slow-past-timeout",
    target: "arm",
    weight: 2,
    description: "ARM answer slower than lookupTimeoutSeconds",
    rule: (scope, _attempts, timeout) => arm(scope, { kind: "delay", delayInMs: timeout + 500 }),
  },
  {
    name: "arm-403",
    target: "arm",
    weight: 2,
    description: "ARM 403 AuthorizationFailed (not retried)",
    rule: (scope) =>
      arm(scope, { kind: "status", statusCode: 403, errorCode: "AuthorizationFailed", message: "The client does not have authorization to perform action" }),
  },
  {
    name: "arm-401",
    target: "arm",
    weight: 2,
    global: true,
    description: "ARM 401 InvalidAuthenticationToken for the whole lane (global: nothing written)",
    rule: (scope) =>
      arm(scope, { kind: "status", statusCode: 401, errorCode: "InvalidAuthenticationToken", message: "The access token is invalid.", count: 20 }, true),
  },
  { name: "arm-no-properties", target: "arm", weight: 1, description: "ARM 200 without properties", rule: (scope) => arm(scope, { kind: "noProperties" }) },
  {
    name: "arm-404-subscription-not-found",
    target: "arm",
    weight: 2,
    description: "ARM 404 SubscriptionNotFound for one identity (not ResourceNotFound: no definitive answer, stored IDs kept)",
    rule: (scope) => arm(scope, { kind: "status", statusCode: 404, errorCode: "SubscriptionNotFound", message: "The subscription could not be found." }),
  },
  {
    name: "arm-404-misrouted",
    target: "arm",
    weight: 1,
    description:
      "ARM 404 with no Azure error on every lookup of the lane, as an endpoint that does not route to ARM answers (no definitive answer, stored IDs kept)",
    rule: (scope) => arm(scope, { kind: "bareStatus", statusCode: 404, body: "404 page not found", count: 30 }, true),
  },
  {
    name: "arm-malformed-client-id",
    target: "arm",
    weight: 1,
    description: "ARM 200 whose properties.clientId is a number (no definitive answer, stored IDs kept)",
    rule: (scope) => arm(scope, { kind: "malformedAnswer", answerEdits: [{ op: "set", pointer: "/properties/clientId", value: 12345 }] }),
  },
  {
    name: "arm-timeout-every-lookup",
    target: "arm",
    weight: 2,
    global: true,
    description: "Every lookup of the pass times out: ARM holds each answer past lookupTimeoutSeconds (global: nothing written)",
    rule: (scope, _attempts, timeout) => arm(scope, { kind: "delay", delayInMs: timeout + 500, count: 30 }, true),
  },
  {
    name: "arm-503-every-lookup",
    target: "arm",
    weight: 2,
    global: true,
    description: "An ARM brownout: 503 without Retry-After on every attempt of every lookup of the pass (global: nothing written)",
    rule: (scope) => arm(scope, { kind: "unavailable", count: 60 }, true),
  },
  {
    name: "cosmos-412-race",
    target: "cosmos",
    weight: 4,
    description: "Cosmos 412: a foreign edit lands between read and write, once",
    rule: (scope) =>
      cosmos(scope, { kind: "race", foreignEdit: { path: `/properties/reliabilityRaces/pass-${scope.passNumber}`, value: scope.passNumber } }, "write"),
  },
  {
    name: "cosmos-412-race-exhausting",
    target: "cosmos",
    weight: 1,
    description: "Cosmos 412 on every write attempt (maxWriteAttempts exhausted)",
    rule: (scope, maxWriteAttempts) =>
      cosmos(
        scope,
        { kind: "race", count: maxWriteAttempts, foreignEdit: { path: `/properties/reliabilityRaces/pass-${scope.passNumber}`, value: scope.passNumber } },
        "write",
      ),
  },
  {
    name: "cosmos-412-foreign-complete-status",
    target: "cosmos",
    weight: 2,
    description:
      "Another writer records a fresh, complete status between our read and our write (412); decided again on the re-read, which needs no work: nothing written, theirs kept",
    rule: (scope) => cosmos(scope, { kind: "race", foreignEdit: { path: ownedSubtreePointer, value: completeStatusOf(scope) } }, "write"),
  },
  {
    name: "cosmos-412-foreign-entry",
    target: "cosmos",
    weight: 2,
    rotatesIdentityFirst: true,
    description:
      "One identity is recreated in ARM and our lookup of it fails (ARM 500 on every attempt); another writer records its new values between our read and our write (412): that entry stays theirs, the others are ours",
    rule: (scope) =>
      cosmos(
        scope,
        {
          kind: "race",
          foreignEdit: {
            path: `${ownedSubtreePointer}/identities/${escapePointerToken(scope.identityId.toLowerCase())}`,
            value: scope.freshEntries[scope.identityId.toLowerCase()],
          },
        },
        "write",
      ),
    alongside: (scope) => arm(scope, { kind: "status", statusCode: 500, errorCode: "InternalServerError", message: "simulated failure", count: 40 }),
  },
  {
    name: "cosmos-429",
    target: "cosmos",
    weight: 3,
    description: "Cosmos 429 with x-ms-retry-after-ms 10, up to three times",
    rule: (scope) => cosmos(scope, { kind: "throttle", count: 3 }),
  },
  {
    name: "cosmos-503-read",
    target: "cosmos",
    weight: 2,
    description: "Cosmos 503 on a read, once",
    rule: (scope) => cosmos(scope, { kind: "unavailable" }, "read"),
  },
  {
    name: "cosmos-503-write",
    target: "cosmos",
    weight: 2,
    description: "Cosmos 503 on the write",
    rule: (scope) => cosmos(scope, { kind: "unavailable" }, "write"),
  },
  {
    name: "cosmos-connection-reset",
    target: "cosmos",
    weight: 1,
    description: "Cosmos connection reset once",
    rule: (scope) => cosmos(scope, { kind: "connectionReset" }),
  },
  {
    name: "cosmos-reset-after-write",
    target: "cosmos",
    weight: 1,
    description: "Cosmos applies the write, then the connection drops before its answer (the hook reads the document back)",
    rule: (scope) => cosmos(scope, { kind: "resetAfterWrite" }, "write"),
  },
  {
    name: "cosmos-delete-before-write",
    target: "cosmos",
    weight: 1,
    description: "The document is deleted just before the write",
    rule: (scope) => cosmos(scope, { kind: "deleteBeforeWrite" }, "write"),
  },
];

/** Faults of the token endpoint (sequential phase, short token lifetime). */
export const tokenFaultKinds: readonly FaultKindSpecification[] = [
  {
    name: "token-500",
    target: "token",
    weight: 2,
    description: "Token endpoint 500 once (MSAL retries; past the lookup deadline the pass fails as global, nothing written)",
    rule: () => ({ target: "token", kind: "status", statusCode: 500, errorCode: "server_error", message: "simulated" }),
  },
  {
    name: "token-503",
    target: "token",
    weight: 1,
    description: "Token endpoint 503 once",
    rule: () => ({ target: "token", kind: "unavailable", retryAfterSeconds: 0 }),
  },
  {
    name: "token-429",
    target: "token",
    weight: 1,
    description: "Token endpoint 429 with Retry-After: 0 once",
    rule: () => ({ target: "token", kind: "throttle", retryAfterSeconds: 0 }),
  },
  {
    name: "token-connection-reset",
    target: "token",
    weight: 2,
    description: "Token endpoint connection reset once",
    rule: () => ({ target: "token", kind: "connectionReset" }),
  },
  {
    name: "token-500-persistent",
    target: "token",
    weight: 2,
    global: true,
    description: "Token endpoint 500 on every request (global: nothing written)",
    rule: () => ({ target: "token", kind: "status", statusCode: 500, errorCode: "server_error", message: "simulated outage", count: 40 }),
  },
  {
    name: "token-401-persistent",
    target: "token",
    weight: 2,
    global: true,
    description: "Token endpoint 401 on every request (global: nothing written)",
    rule: () => ({ target: "token", kind: "status", statusCode: 401, errorCode: "invalid_client", message: "simulated refusal", count: 40 }),
  },
  {
    name: "token-down",
    target: "token",
    weight: 2,
    global: true,
    description: "Token endpoint down: every connection reset (global: nothing written)",
    rule: () => ({ target: "token", kind: "connectionReset", count: 40 }),
  },
  {
    name: "token-400-persistent",
    target: "token",
    weight: 2,
    global: true,
    description: "Token endpoint 400 on every request (no credential)",
    rule: () => ({ target: "token", kind: "status", statusCode: 400, errorCode: "invalid_request", message: "simulated refusal", count: 20 }),
  },
];

/**
 * A fault of a whole Azure host rather than of requests: not a sandbox rule (an HTTP server cannot
 * refuse a connection it has accepted), but the settings of the pass's provider. It hits every
 * lane alike, so these passes run in a phase of their own, each with its own provider.
 */
export interface HostFaultSpecification {
  readonly name: string;
  readonly target: "arm";
  readonly description: string;
  /** Settings that put the pass's provider in front of the failed host. */
  settings(closedEndpoint: string): Readonly<Record<string, string>>;
}

/** Host faults (a phase of their own). */
export const hostFaultKinds: readonly HostFaultSpecification[] = [
  {
    name: "arm-host-down",
    target: "arm",
    description:
      "ARM host down: the pass's provider reaches ARM at a loopback port where nothing listens, so every connection is refused, retried within lookupTimeoutSeconds (global: nothing written)",
    settings: (closedEndpoint) => ({ armEndpoint: closedEndpoint }),
  },
];

/**
 * A circumstance of a delete (`pulumi destroy`, a cluster leaving the stack): another writer, or
 * another resource of the same cluster, changed the document after this resource's last write. The
 * delete must write nothing, as in every other case.
 */
export interface DeleteFaultSpecification {
  readonly name: string;
  readonly target: "cosmos";
  readonly description: string;
  /**
   * `before`: another writer records a fresh, complete status (one identity rotated in ARM, a later
   * recheck time) before the delete; `rename`: another resource of the same cluster (a new name,
   * another stack) is created before the delete.
   */
  readonly when: "before" | "rename";
}

/** Delete faults (the delete phase, alternating with plain deletes). */
export const deleteFaultKinds: readonly DeleteFaultSpecification[] = [
  {
    name: "foreign-write-before-delete",
    target: "cosmos",
    when: "before",
    description: "Another writer records a fresh status after this resource's last write, before the delete: the delete writes nothing",
  },
  {
    name: "rename-before-delete",
    target: "cosmos",
    when: "rename",
    description:
      "The cluster's resource is renamed the way the engine does it without an alias: a resource of the same cluster is created over the current status (it writes nothing), then the old one is deleted (it writes nothing)",
  },
];

/**
 * A setting that names Cosmos resources that do not exist: not a sandbox rule but the settings of
 * the phase's provider, which refreshes, updates and deletes resources recorded with the right
 * settings. Cosmos answers 404 with substatus 1003 below a missing database or container.
 */
export interface SettingsFaultSpecification {
  readonly name: string;
  readonly target: "cosmos";
  readonly description: string;
  /** The setting that is wrong: every failure must name it. */
  readonly setting: string;
  /** The settings of the phase's provider, given the right ones. */
  settings(config: Readonly<Record<string, string>>): Readonly<Record<string, string>>;
  /** Makes what the wrong settings name exist, when they name something that exists. */
  prepare?(sandbox: Sandbox): Promise<void>;
}

/** Settings faults (a phase of their own). */
export const settingsFaultKinds: readonly SettingsFaultSpecification[] = [
  {
    name: "cosmos-wrong-container",
    target: "cosmos",
    setting: "cosmosContainer",
    description:
      "cosmosContainer names a container that does not exist: refresh and update fail naming the setting, write nothing, and the resource stays in state; a delete writes nothing and succeeds",
    settings: (config) => ({ cosmosContainer: `${config.cosmosContainer ?? "Resources"}-typo` }),
  },
  {
    name: "cosmos-wrong-database",
    target: "cosmos",
    setting: "cosmosDatabase",
    description: "cosmosDatabase names a database that does not exist: the same",
    settings: (config) => ({ cosmosDatabase: `${config.cosmosDatabase ?? "arohcp"}-typo` }),
  },
  {
    name: "cosmos-other-container",
    target: "cosmos",
    setting: "cosmosContainer",
    description:
      "cosmosContainer names another container of the database, which exists (as Billing does beside Resources): nothing of the clusters' subscriptions is there, so refresh and update fail naming the setting instead of reading the documents as deleted, write nothing, and the resource stays in state; a delete writes nothing and succeeds",
    settings: () => ({ cosmosContainer: "Billing" }),
    prepare: async (sandbox) => {
      await sandbox.cosmosContainer.database.containers.createIfNotExists({ id: "Billing", partitionKey: { paths: ["/partitionKey"] } });
    },
  },
];

/** Picks one kind by weight with `random` in [0, 1). */
export function pickWeighted(kinds: readonly FaultKindSpecification[], random: () => number): FaultKindSpecification {
  const total = kinds.reduce((sum, kind) => sum + kind.weight, 0);
  let point = random() * total;
  for (const kind of kinds) {
    point -= kind.weight;
    if (point < 0) {
      return kind;
    }
  }
  return kinds[kinds.length - 1];
}
