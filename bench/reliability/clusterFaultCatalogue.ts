/**
 * The faults of the cluster-mode phase (`credentialMode=clusterServiceManagedIdentity` over a
 * per-cluster sandbox, each cluster in its own tenant and subscription, readable only by its own
 * service managed identity). Two families:
 *
 * - Cluster faults, aimed at one cluster of a run: its Managed Identities data plane answer, its
 *   SMI's token in its own tenant, its SMI's role assignments. The lane faults of the process-mode
 *   campaign (ARM and Cosmos, faultCatalogue.ts) are aimed at one cluster the same way.
 * - Run faults, about the first-party application every cluster's credential comes through:
 *   Entra refusing it, its certificate revoked, rotated mid-run, its file briefly unreadable. A run
 *   is then split in two halves with the change between them.
 */
import { randomBytes } from "node:crypto";
import { readFile, rename, rm, writeFile } from "node:fs/promises";
import type { FaultRule, FaultRuleInput } from "../../sandbox/faultInjector";
import type { Sandbox } from "../../sandbox/sandbox";
import type { FleetClusterDescription } from "../../sandbox/seed";

/** What a cluster fault is aimed at. */
export interface ClusterFaultContext {
  readonly sandbox: Sandbox;
  readonly cluster: FleetClusterDescription;
  /** One of the cluster's identities, for single-identity faults. */
  readonly identityId: string;
  readonly lookupTimeoutInMs: number;
}

/** A cluster fault as applied for one run. */
export interface AppliedFault {
  /** Times it fired (the sandbox's count; for a role removal, the assignments removed). */
  fired(): number;
  /** Stops it (and puts back what it took away), before the run is judged. */
  retire(): void;
  /** The sandbox rules it added, when it is made of rules (the invariants read what they answered). */
  rules?(): readonly FaultRule[];
}

/**
 * What the target cluster's pass must end as when this fault alone fired:
 * - `clusterFailure`: a ClusterCredentialError naming the cluster, nothing written for it;
 * - `nothingWritten`: a failure before any write (ClusterCredentialError or AzureAccessError);
 * - `definitive403`: the identities whose role was removed are answered 403 to the cluster's own
 *   SMI, a definitive answer: their IDs cleared beside a 403 retrievalError, the others recorded;
 * - `recovers`: the fault is retried away, and the cluster ends exactly as a fault-free run;
 * - `msiKept`: the MSI half's data plane request fails: that half stays exactly as it was
 *   (MsiIdentitiesError), and the data plane operators half is decided as usual.
 */
export type TargetExpectation = "clusterFailure" | "nothingWritten" | "definitive403" | "recovers" | "msiKept";

/** One kind of cluster fault, named as the report lists it. */
export interface ClusterFaultSpecification {
  readonly name: string;
  readonly target: "dataPlane" | "entra" | "arm";
  readonly description: string;
  readonly expected: TargetExpectation;
  apply(context: ClusterFaultContext): AppliedFault;
}

function ruleFault(sandbox: Sandbox, input: FaultRuleInput): AppliedFault {
  const rule: FaultRule = sandbox.faults.add(input);
  return {
    fired: () => rule.triggered,
    retire: () => {
      rule.remaining = 0;
    },
    rules: () => [rule],
  };
}

const dataPlane = (context: ClusterFaultContext, rest: Omit<FaultRuleInput, "target" | "match">): AppliedFault =>
  ruleFault(context.sandbox, { target: "dataPlane", match: { clusterResourceId: context.cluster.clusterResourceId }, ...rest });

const smiToken = (context: ClusterFaultContext, rest: Omit<FaultRuleInput, "target" | "match">): AppliedFault =>
  ruleFault(context.sandbox, {
    target: "entra",
    match: { tenantId: context.cluster.tenantId ?? "", clientId: context.cluster.serviceManagedIdentityClientId ?? "" },
    ...rest,
  });

/**
 * A fault of the MSI half's request alone (the one naming a control plane operator identity; the
 * SMI's credential request is answered), after making the half's own recheck time due so that the
 * pass asks for it.
 */
function msiRequestFault(context: ClusterFaultContext, rest: (operator: string) => Omit<FaultRuleInput, "target" | "match">): AppliedFault {
  const [operator] = Object.values(context.cluster.controlPlaneOperators ?? {});
  const requested = operator ?? context.cluster.serviceManagedIdentity;
  context.sandbox.documents.patch(
    context.cluster.partitionKey,
    context.cluster.serviceProviderClusterDocumentId,
    "/properties/status/msiManagedIdentities/earliestRecheckTime",
    "2020-01-01T00:00:00Z",
  );
  return ruleFault(context.sandbox, {
    target: "dataPlane",
    match: { clusterResourceId: context.cluster.clusterResourceId, requestedIdentityId: requested },
    ...rest(requested),
  });
}

/** Removes the SMI's role assignments over `scopes` (its identities); retiring assigns them again. */
function roleRemoval(context: ClusterFaultContext, scopes: readonly string[]): AppliedFault {
  const { directory } = context.sandbox.credentials;
  const principal = context.cluster.serviceManagedIdentityPrincipalId ?? "";
  let removed = 0;
  for (const scope of scopes) removed += directory.removeRoleAssignments(principal, scope);
  return {
    fired: () => removed,
    retire: () => {
      for (const scope of scopes) directory.assignRole({ principalObjectId: principal, scope });
    },
  };
}

/** Faults aimed at one cluster of a run. */
export const clusterFaultKinds: readonly ClusterFaultSpecification[] = [
  {
    name: "dataplane-400",
    target: "dataPlane",
    expected: "clusterFailure",
    description: "The data plane answers the cluster's credential request with 400 BadRequest (not retried)",
    apply: (context) => dataPlane(context, { kind: "status", statusCode: 400, errorCode: "BadRequest", message: "simulated bad request", count: 10 }),
  },
  {
    name: "dataplane-403",
    target: "dataPlane",
    expected: "clusterFailure",
    description: "The data plane refuses the first-party application for this cluster: 403 Forbidden",
    apply: (context) => dataPlane(context, { kind: "status", statusCode: 403, errorCode: "Forbidden", message: "simulated refusal", count: 10 }),
  },
  {
    name: "dataplane-404",
    target: "dataPlane",
    expected: "clusterFailure",
    description: "The data plane does not know the cluster's SMI: 404 NotFound",
    apply: (context) => dataPlane(context, { kind: "status", statusCode: 404, errorCode: "NotFound", message: "simulated not found", count: 10 }),
  },
  {
    name: "dataplane-429-persistent",
    target: "dataPlane",
    expected: "clusterFailure",
    description: "The data plane throttles every try: 429 with Retry-After: 0 (the pipeline gives up after its retries)",
    apply: (context) => dataPlane(context, { kind: "throttle", retryAfterSeconds: 0, count: 10 }),
  },
  {
    name: "dataplane-500-persistent",
    target: "dataPlane",
    expected: "clusterFailure",
    description: "The data plane answers 500 on every try (retried with back-off until lookupTimeoutSeconds)",
    apply: (context) => dataPlane(context, { kind: "status", statusCode: 500, errorCode: "InternalServerError", message: "simulated failure", count: 10 }),
  },
  {
    name: "dataplane-503-once",
    target: "dataPlane",
    expected: "recovers",
    description: "The data plane answers 503 once (retried: the cluster ends as a fault-free run)",
    apply: (context) => dataPlane(context, { kind: "unavailable" }),
  },
  {
    name: "dataplane-timeout",
    target: "dataPlane",
    expected: "clusterFailure",
    description: "The data plane holds its answer past lookupTimeoutSeconds",
    apply: (context) => dataPlane(context, { kind: "delay", delayInMs: context.lookupTimeoutInMs + 500, count: 10 }),
  },
  {
    name: "dataplane-connection-reset",
    target: "dataPlane",
    expected: "clusterFailure",
    description: "The data plane resets the connection on every try",
    apply: (context) => dataPlane(context, { kind: "connectionReset", count: 10 }),
  },
  {
    name: "dataplane-no-explicit-identities",
    target: "dataPlane",
    expected: "clusterFailure",
    description: "The data plane answers 200 without explicit_identities",
    apply: (context) => dataPlane(context, { kind: "noExplicitIdentities", count: 10 }),
  },
  {
    name: "dataplane-unusable-certificate",
    target: "dataPlane",
    expected: "clusterFailure",
    description: "The data plane answers 200 with a client_secret that is no certificate bundle",
    apply: (context) => dataPlane(context, { kind: "unusableCertificate", count: 10 }),
  },
  {
    name: "dataplane-msi-request-503-persistent",
    target: "dataPlane",
    expected: "msiKept",
    description:
      "The data plane answers 503 on every try of the MSI half's request (the one naming the control plane operator identities); the SMI's credential request is answered",
    apply: (context) => msiRequestFault(context, () => ({ kind: "unavailable", count: 20 })),
  },
  {
    name: "dataplane-msi-answer-client-id-number",
    target: "dataPlane",
    expected: "msiKept",
    description:
      "The data plane answers the MSI half's request with a number for a control plane operator identity's client_id (upstream's Go client refuses the whole answer): that half's stored IDs stay",
    apply: (context) =>
      msiRequestFault(context, (operator) => ({
        kind: "malformedAnswer",
        answerEdits: [{ op: "set", identityId: operator, pointer: "/client_id", value: 12345 }],
        count: 5,
      })),
  },
  {
    name: "dataplane-msi-answer-partial",
    target: "dataPlane",
    expected: "msiKept",
    description:
      "The data plane answers the MSI half's request without the entry of a control plane operator identity, and with one for an identity not asked for: that half's stored IDs stay",
    apply: (context) =>
      msiRequestFault(context, (operator) => ({
        kind: "malformedAnswer",
        answerEdits: [
          { op: "addEntry", identityId: operator, resourceId: `${operator}-not-asked-for` },
          { op: "dropEntry", identityId: operator },
        ],
        count: 5,
      })),
  },
  {
    name: "smi-token-refused",
    target: "entra",
    expected: "nothingWritten",
    description: "Entra ID refuses the cluster's SMI in its tenant: 401 invalid_client on every token request",
    apply: (context) =>
      smiToken(context, { kind: "status", statusCode: 401, errorCode: "invalid_client", message: "AADSTS700027: simulated refusal of the SMI", count: 20 }),
  },
  {
    name: "smi-tenant-entra-down",
    target: "entra",
    expected: "nothingWritten",
    description: "Entra ID of the cluster's tenant resets every connection of the SMI's token requests",
    apply: (context) => smiToken(context, { kind: "connectionReset", count: 20 }),
  },
  {
    name: "smi-role-removed-one-identity",
    target: "arm",
    expected: "definitive403",
    description: "The SMI's role assignment over one identity is removed: ARM answers 403 to the cluster's own SMI, a definitive answer (IDs cleared)",
    apply: (context) => roleRemoval(context, [context.identityId]),
  },
  {
    name: "smi-role-removed-every-identity",
    target: "arm",
    expected: "definitive403",
    description: "Every role assignment of the SMI is removed: ARM answers 403 to it for each identity",
    apply: (context) => roleRemoval(context, Object.values(context.cluster.dataPlaneOperators)),
  },
];

/** What each half of a run with a run fault must end as. */
export type HalfExpectation = "nothingWritten" | "faultFree";

/** A run fault as set up for one run. */
export interface RunFaultHandle {
  readonly firstHalf: HalfExpectation;
  readonly secondHalf: HalfExpectation;
  /** When given, the second half's clusters run again in a new process after the run (the next `pulumi up`), and must end so. */
  readonly nextRun?: "faultFree";
  /** Applied between the two halves. */
  midRun(): Promise<void>;
  /** Times it fired (the sandbox's count, or what was changed). */
  fired(): number;
  /** Puts back what it changed, before the run is judged. */
  tearDown(): Promise<void>;
}

/** The first-party application's certificate: the serial number in use, kept by the phase across rotations. */
export interface FirstPartyCertificate {
  serialNumber: string | undefined;
}

/** One kind of run fault. */
export interface RunFaultSpecification {
  readonly name: string;
  readonly target: "entra" | "firstPartyFile";
  readonly description: string;
  setUp(sandbox: Sandbox, certificate: FirstPartyCertificate): Promise<RunFaultHandle>;
}

const noop = (): Promise<void> => Promise.resolve();

/** Replaces a file atomically (as a rotation does), so a reader sees the old or the new bytes, never a mix. */
async function replaceFile(path: string, content: Buffer | undefined): Promise<void> {
  if (content === undefined) {
    await rm(path, { force: true });
    return;
  }
  const temporary = `${path}.${randomBytes(6).toString("hex")}.tmp`;
  await writeFile(temporary, content, { mode: 0o600 });
  await rename(temporary, path);
}

/** The first-party bundle file unreadable for the first half (half-written, or gone), back for the second. */
function unreadableFile(name: string, description: string, replacement: (original: Buffer) => Buffer | undefined): RunFaultSpecification {
  return {
    name,
    target: "firstPartyFile",
    description,
    setUp: async (sandbox) => {
      const path = sandbox.credentialChain.firstPartyApplication.certificateBundlePath;
      const original = await readFile(path);
      await replaceFile(path, replacement(original));
      let restored = false;
      const restore = async (): Promise<void> => {
        if (restored) return;
        restored = true;
        await replaceFile(path, original);
      };
      // A bundle file's failure is not held (clusterCredentials.ts): the second half, in the same process,
      // reads the whole file again and ends as a fault-free run; so does the next run (a new process).
      return { firstHalf: "nothingWritten", secondHalf: "faultFree", nextRun: "faultFree", midRun: restore, fired: () => 1, tearDown: restore };
    },
  };
}

/** Faults of the first-party credential, for a whole run. */
export const runFaultKinds: readonly RunFaultSpecification[] = [
  {
    name: "first-party-refused",
    target: "entra",
    description: "Entra ID refuses the first-party application: 400 invalid_client on every token request (global: nothing written anywhere)",
    setUp: (sandbox) => {
      const rule = sandbox.faults.add({
        target: "entra",
        kind: "status",
        statusCode: 400,
        errorCode: "invalid_client",
        message: "AADSTS7000215: simulated refusal of the first-party application",
        count: 1000,
        match: { clientId: sandbox.credentialChain.firstPartyApplication.clientId },
      });
      return Promise.resolve({
        firstHalf: "nothingWritten",
        secondHalf: "nothingWritten",
        midRun: noop,
        fired: () => rule.triggered,
        tearDown: () => {
          rule.remaining = 0;
          return Promise.resolve();
        },
      });
    },
  },
  {
    name: "first-party-certificate-revoked",
    target: "entra",
    description:
      "The first-party certificate in the file is revoked before a new one is there: Entra refuses it (AADSTS700027), a re-read finds the same file (global: nothing written anywhere); the new certificate comes after the run",
    setUp: (sandbox, certificate) => {
      const revoked = certificate.serialNumber !== undefined && sandbox.credentials.revokeCertificate(certificate.serialNumber);
      return Promise.resolve({
        firstHalf: "nothingWritten",
        secondHalf: "nothingWritten",
        midRun: noop,
        fired: () => (revoked ? 1 : 0),
        tearDown: async () => {
          certificate.serialNumber = (await sandbox.credentials.rotateFilePrincipal("firstPartyApplication")).serialNumber;
        },
      });
    },
  },
  {
    name: "first-party-rotated-mid-run",
    target: "firstPartyFile",
    description:
      "Between the two halves of a run the first-party certificate is rotated and the old one revoked at once (tokens live 1 s, so the second half asks Entra again): refused once, the file is re-read and the new certificate takes over; every pass ends as a fault-free run",
    setUp: (sandbox, certificate) => {
      const lifetime = sandbox.tokens.tokenLifetimeInMs;
      const refusalsBefore = sandbox.statistics.snapshot().entra.errorsByCode["700027"] ?? 0;
      sandbox.tokens.setTokenLifetime(1000);
      return Promise.resolve({
        firstHalf: "faultFree",
        secondHalf: "faultFree",
        midRun: async () => {
          certificate.serialNumber = (await sandbox.credentials.rotateFilePrincipal("firstPartyApplication", { revokePreviousAfterMs: 0 })).serialNumber;
        },
        fired: () => (sandbox.statistics.snapshot().entra.errorsByCode["700027"] ?? 0) - refusalsBefore,
        tearDown: () => {
          sandbox.tokens.setTokenLifetime(lifetime);
          return Promise.resolve();
        },
      });
    },
  },
  unreadableFile(
    "first-party-file-half-written",
    "The first-party bundle file is caught half-written (its first 40 %) as a run starts: the first half fails as global, nothing written; the whole file is back for the second half, which in the same process reads it again (a file's failure is not held) and ends as a fault-free run, as does the next run (a new process)",
    (original) => original.subarray(0, Math.floor(original.length * 0.4)),
  ),
  unreadableFile(
    "first-party-file-missing",
    "The first-party bundle file is briefly gone (between a delete and a write) as a run starts: the same",
    () => undefined,
  ),
];
