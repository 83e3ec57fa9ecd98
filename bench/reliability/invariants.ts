/**
 * The invariants a pass must keep, checked directly on the ServiceProviderCluster document read
 * back from Cosmos after the pass (and, for a refresh or a delete, on what the provider returned).
 * Each check returns the violations it found (empty when the document is right), phrased so a
 * report line stands alone. The rules are those of docs/design.md: stored IDs change only on a
 * definitive answer about that identity; a failure that is not about one identity changes nothing
 * stored; state never loses a resource whose document exists.
 */
import { isDeepStrictEqual } from "node:util";
import type { IdentityStore } from "../../sandbox/identityStore";
import type { Document } from "./reliabilitySandbox";
import { foreignFields, msiHalf, ownedStatus } from "./reliabilitySandbox";
import { encodeOutputsStatus, operatorNamesFromOutputs } from "../../resources/core/outputsStatus";
import { readOutputsStatusText } from "../../resources/core/outputsStatus";
import type { NonDefinitiveAnswers } from "./nonDefinitiveAnswers";
import { nonDefinitiveViolations } from "./nonDefinitiveAnswers";
import { dataPlaneHalf } from "../../resources/core/serviceProviderClusterDocument";

/**
 * The outputs' status (its JSON text, by operator name) is exactly the persisted
 * subtree written small, under the operator names the outputs give: every entry, ID and error, and
 * the recheck time.
 */
function reportsPersistedStatus(reported: string, persisted: Document): boolean {
  const outputs = readOutputsStatusText(reported);
  const subtree = dataPlaneHalf.readSubtree(persisted);
  if (outputs.problems.length > 0 || subtree.problems.length > 0) return false;
  return isDeepStrictEqual(outputs.status, encodeOutputsStatus(subtree.status, operatorNamesFromOutputs(outputs.status)));
}

/**
 * The invariants as the report states them, in the order it lists them, each with the words its
 * violations use, so every violation found counts against the invariant it breaks.
 */
export const invariantCatalogue: ReadonlyArray<{ readonly key: string; readonly statement: string; readonly violation: RegExp }> = [
  {
    key: "foreignFields",
    statement: "every field outside the owned subtree is unchanged (edits raced in by `race` faults are expected and must survive)",
    violation: /foreign fields changed|fields outside the owned subtree/,
  },
  {
    key: "entryValues",
    statement:
      "every identity entry either holds the values ARM has now, without retrievalError, or carries a retrievalError with either no clientId/principalId or the ones it held before the pass (kept because the answer was not definitive); a ResourceNotFound entry holds no IDs and its identity is indeed absent from ARM; the key set equals the desired set",
    violation:
      /stale values|has a retrievalError beside|recorded ResourceNotFound|does not exist in ARM, yet|differ from the desired set|no status subtree was persisted/,
  },
  {
    key: "definitiveAnswers",
    statement:
      "no stored clientId/principalId is cleared except by a definitive answer about that identity: ARM's ResourceNotFound for it in that pass, a read returning other values, or a 403 read with the cluster's own credential (the process-mode passes run with the provider's default, its own process credential, so there a 403 must keep them; in cluster mode a 403 to the cluster's own SMI clears them, and must)",
    violation: /cleared without a definitive answer|definitive answer \(403/,
  },
  {
    key: "nonDefinitiveAnswers",
    statement:
      "a non-definitive answer changes no stored ID: an identity ARM answers with a 404 whose code is not ResourceNotFound (SubscriptionNotFound, or no Azure error, as an endpoint that does not route to ARM answers) or with a 200 whose clientId/principalId is not a string keeps its stored clientId/principalId and is never recorded as ResourceNotFound; a data plane answer that is malformed or partial (a field of another type, an entry missing or for an identity not asked for) changes no stored ID of the MSI half",
    violation: /a non-definitive answer/,
  },
  {
    key: "globalFailures",
    statement:
      "a failure that is not about one identity changes nothing stored: a pass whose only fault is a credential failure, ARM 401, ARM unreachable, or every lookup failing with the same transient class (timeouts, 5xx) ends as a global failure (AzureAccessError) with the owned subtree exactly as it was; in cluster mode, a data plane failure for the cluster ends its pass as a ClusterCredentialError naming the cluster, its SMI refused by Entra ID before any write, and a first-party credential failure every pass of the run as a global failure, each with nothing stored changed; a failed Cosmos write leaves it as it was too, unless the write got no answer and its failure says it may have landed",
    violation: /not about one identity|not as a global failure|a failed write changed/,
  },
  {
    key: "otherWriters",
    statement:
      "another writer's status is theirs: after a 412 the decision is made again on the re-read, so over a complete, current status nothing is written and an entry the other writer changed since our read stays as they wrote it",
    violation: /another writer/,
  },
  {
    key: "msiHalf",
    statement:
      "the MSI half (status.msiManagedIdentities) is written whole or not at all: after every pass it is exactly what it was, or every control plane operator identity and the service managed identity in it holds what Azure holds now (no IDs for one that no longer exists)",
    violation: /the MSI half was rewritten/,
  },
  {
    key: "unknownFields",
    statement: "fields of the owned subtree and of its entries that this hook does not know survive every write",
    violation: /which this hook does not know/,
  },
  {
    key: "recheckTime",
    statement:
      "earliestRecheckTime is set only when no entry records a failed lookup (ResourceNotFound counts as an answer, as upstream), and always after a successful pass whose entries record none; a pass that reports lookup failures persists at least one (unless another writer recorded the status meanwhile)",
    violation: /earliestRecheckTime|reported lookup failures/,
  },
  {
    key: "stateKeepsResources",
    statement:
      "a refresh never drops a resource whose cluster documents exist: it returns an empty id (the engine drops the resource) only when the ServiceProviderCluster and HCPOpenShiftCluster documents are both gone and the subscription's own document is there (the container is the fleet's); with the cluster document there it keeps the resource, a drift line naming the missing document; with nothing of the subscription there it fails naming cosmosContainer; a refresh never writes",
    violation: /empty id|kept the resource|state held|refresh wrote|refresh neither|dropped a resource|cannot tell/,
  },
  {
    key: "deletes",
    statement:
      "a delete writes nothing: the ServiceProviderCluster document, its etag and instanceVersion included, is exactly what it was, whatever the resource's outputs recorded, another writer did, or a rename (a resource of the same cluster created first) left; the delete succeeds whatever the documents or settings; the rename's create, over a status already current, writes nothing either",
    violation: /^a delete |^a rename's create /,
  },
  {
    key: "settingsErrors",
    statement:
      "settings that name a Cosmos database or container that does not exist fail every refresh and update with a message naming the setting and its value, and write nothing; a delete with them writes nothing and succeeds (it relinquishes the cluster: the engine forgets the resource, by design)",
    violation: /with a wrong \w+|names the setting/,
  },
  {
    key: "clusterIsolation",
    statement:
      "a cluster's failure changes nothing of another cluster: in a cluster-mode run with a fault aimed at one cluster (its data plane answer, its SMI's token or role assignments, its ARM lookups or its document), every other cluster's document and the state the provider returns for it are exactly what a fault-free run of that cluster from the same document gives (the same jitter; earliestRecheckTime within seconds); a fault that is retried away (a data plane 503 once, the first-party certificate rotated and revoked mid-run) leaves the passes it touched as a fault-free run too, and the run after a first-party file was briefly unreadable ends as one",
    violation: /cluster isolation|fault-free run/,
  },
  {
    key: "messages",
    statement:
      "every retrievalError is one line `<code> (HTTP <status>): <text>`, at most 1024 code points, with no request URL, stack frame or secret; every failure names the document, a document deleted mid-pass is never recreated and the failure says so; the status reported to the engine equals the persisted one; no Cosmos write lacks If-Match (sandbox statistics); no error other than the documented ones, no unhandled rejection, no crash",
    violation: /./,
  },
];

/** The index in {@link invariantCatalogue} of the invariant a violation breaks (the last one catches the rest). */
export function invariantOf(violation: string): number {
  return invariantCatalogue.findIndex((invariant) => invariant.violation.test(violation));
}

/** How a pass ended, as the engine would see it. */
export type PassOutcome =
  /** The provider returned normally. */
  | "succeeded"
  /** The provider persisted the status, then failed on lookup errors (an error carrying `properties`). */
  | "lookupFailed"
  /** The provider failed to read or write the document (CosmosDocumentError); nothing written, unless its failure says a write that got no answer may have landed. */
  | "writeFailed"
  /** A failure not about one identity (AzureAccessError: credential, ARM 401, ARM unreachable, every lookup failing alike); nothing written. */
  | "globalFailure"
  /** Cluster mode: this cluster's credential could not be had (ClusterCredentialError: its data plane answer); nothing written for it. */
  | "clusterFailure"
  /** The MSI half got no complete answer (MsiIdentitiesError); the data plane operators' half was decided as usual. */
  | "msiFailed"
  /** Anything else: an unexpected error type, or a crash. */
  | "crashed";

/** What the checker needs to know about one pass. */
export interface PassRecord {
  readonly outcome: PassOutcome;
  /**
   * The document before the pass (after the pre-pass edits, and with any edit another writer made
   * inside the owned subtree between the pass's read and its write), and after it; undefined when absent.
   */
  readonly before: Document | undefined;
  readonly after: Document | undefined;
  /** Foreign fields the document must have after the pass (before's, plus edits raced in). */
  readonly expectedForeign: Document | undefined;
  /** Lowercase keys of the desired identities, with their resource IDs. */
  readonly desired: ReadonlyMap<string, string>;
  /** The status the provider reported (outputs or the error's properties, as JSON text), when it reported one. */
  readonly reportedStatus: string | undefined;
  /** Whether the document was deleted by a fault during the pass. */
  readonly deletedDuringPass: boolean;
  /** The error message, when the pass failed. */
  readonly errorMessage: string | undefined;
  /** The document id, which every write failure must name. */
  readonly documentId: string;
  /**
   * Entries another writer changed between the pass's read and its write, as they wrote them, by
   * key: the decision made again on the re-read must keep them as theirs.
   */
  readonly otherWriterEntries?: ReadonlyMap<string, Document>;
  /** True when another writer recorded a complete, current status between the pass's read and its write: nothing may be written over it. */
  readonly otherWriterRecordedStatus?: boolean;
  /**
   * Whose credential read the identities: only with `cluster` (the cluster's own identity) is a 403
   * a definitive answer that clears stored IDs. `process`, the provider's default, when absent.
   */
  readonly credentialScope?: "process" | "cluster";
  /** What the pass's faults answered without a definitive answer (nonDefinitiveAnswers.ts); none when absent. */
  readonly nonDefinitiveAnswers?: NonDefinitiveAnswers;
  /** The cluster's ARM ID, which a cluster failure (ClusterCredentialError) must name. */
  readonly clusterResourceId?: string;
}

/**
 * A URL of a request the hook made (loopback sandbox, ARM, Cosmos, token endpoint, or any URL with
 * a subscription path or api-version). ARM's own help links (https://aka.ms/…) are service text.
 */
const requestUrl = /https?:\/\/(?:127\.0\.0\.1|localhost|[^\s/]*\.documents\.azure|169\.254\.)|https?:\/\/\S*(?:\/subscriptions\/|api-version=)/i;
const retrievalErrorShape = /^[A-Za-z][A-Za-z0-9]*( \(HTTP \d{3}\))?: \S/;

/** Checks every invariant of one pass; `secrets` must appear nowhere. */
export function checkPass(record: PassRecord, identities: IdentityStore, secrets: readonly string[]): string[] {
  const violations: string[] = [];
  if (record.outcome === "crashed") {
    violations.push(`the provider crashed: ${record.errorMessage ?? "(no message)"}`);
  }
  if (record.errorMessage !== undefined) {
    violations.push(...secretViolations("error message", record.errorMessage, secrets));
  }
  if (record.deletedDuringPass) {
    if (record.after !== undefined) {
      violations.push("the document was deleted during the pass but exists afterwards: the hook must never create it");
    }
    if (record.outcome === "succeeded") {
      violations.push("the document was deleted during the pass, yet the pass reported success");
    } else if (!/deleted|does not exist/.test(record.errorMessage ?? "")) {
      violations.push(`the failure does not say the document was deleted: ${record.errorMessage ?? ""}`);
    }
    return violations;
  }
  if (record.after === undefined || record.expectedForeign === undefined) {
    return [...violations, "the document is missing after the pass"];
  }
  if (!isDeepStrictEqual(foreignFields(record.after), record.expectedForeign)) {
    violations.push(`foreign fields changed: ${firstDifference(record.expectedForeign, foreignFields(record.after))}`);
  }
  violations.push(...msiViolations(msiHalf(record.before), msiHalf(record.after), identities));
  const theirs = { entries: new Set(record.otherWriterEntries?.keys() ?? []), wholeSubtree: record.otherWriterRecordedStatus === true };
  violations.push(...nonDefinitiveViolations(record.nonDefinitiveAnswers, record.before, record.after, theirs));
  const status = ownedStatus(record.after);
  if (record.outcome === "clusterFailure") {
    // The cluster's credential could not be had: nothing about its identities is known, nothing stored changes.
    if (!isDeepStrictEqual(status, ownedStatus(record.before))) {
      violations.push("a failure not about one identity (the cluster's credential) changed the owned subtree (everything stored must stay as it was)");
    }
    const cluster = record.clusterResourceId;
    if (cluster !== undefined && !(record.errorMessage ?? "").toLowerCase().includes(cluster.toLowerCase())) {
      violations.push(`the cluster credential failure does not name cluster ${cluster}: ${record.errorMessage ?? ""}`);
    }
    return violations;
  }
  if (record.outcome === "globalFailure") {
    // A failure that is not about one identity changes nothing stored: no clientId or principalId, nor anything else it owns.
    if (!isDeepStrictEqual(status, ownedStatus(record.before))) {
      violations.push("a failure not about one identity (global) changed the owned subtree (everything stored must stay as it was)");
    }
    if (record.errorMessage !== undefined && !record.errorMessage.includes(record.documentId)) {
      violations.push(`the global failure does not name document ${record.documentId}: ${record.errorMessage}`);
    }
    return violations;
  }
  if (record.outcome === "writeFailed") {
    // A write that got no answer and could not be read back may have landed, and its failure says so.
    const mayHaveLanded = (record.errorMessage ?? "").includes("the write got no answer and may have landed");
    if (!mayHaveLanded && !isDeepStrictEqual(status, ownedStatus(record.before))) {
      violations.push("a failed write changed the owned subtree (a partial write)");
    }
    if (record.errorMessage !== undefined && !record.errorMessage.includes(record.documentId)) {
      violations.push(`the write failure does not name document ${record.documentId}: ${record.errorMessage}`);
    }
    return violations;
  }
  if (status === undefined) {
    return [...violations, `the pass ended '${record.outcome}' but no status subtree was persisted`];
  }
  if (record.otherWriterRecordedStatus === true && !isDeepStrictEqual(status, ownedStatus(record.before))) {
    // Decided again on the re-read: a complete, current status needs no work, and ours is older than theirs.
    violations.push("another writer recorded a complete, current status between our read and our write, yet the pass wrote over it");
  }
  if (record.reportedStatus !== undefined && !reportsPersistedStatus(record.reportedStatus, status)) {
    violations.push("the status reported to the engine differs from the status persisted in Cosmos");
  }
  violations.push(...statusViolations(status, record, identities, secrets));
  return violations;
}

/**
 * The MSI half is written whole or not at all: after a pass it is either exactly what it was, or
 * every identity in it holds what Azure holds now (the data plane's null, a missing field, for an
 * identity that no longer exists).
 */
function msiViolations(before: Document | undefined, after: Document | undefined, identities: IdentityStore): string[] {
  if (isDeepStrictEqual(before, after) || after === undefined) return [];
  const entries = [
    ...Object.values((after.controlPlaneOperatorsIdentities as Record<string, Document> | undefined) ?? {}),
    ...(after.serviceManagedIdentity === undefined ? [] : [after.serviceManagedIdentity as Document]),
  ];
  return entries.flatMap((entry) => {
    const resourceId = typeof entry.resourceId === "string" ? entry.resourceId : "";
    const inAzure = identities.get(resourceId);
    const current =
      inAzure === undefined
        ? entry.clientId === undefined && entry.principalId === undefined
        : entry.clientId === inAzure.clientId && entry.principalId === inAzure.principalId;
    return current ? [] : [`the MSI half was rewritten with stale values for ${resourceId} (neither as it was nor as Azure holds it now)`];
  });
}

/**
 * {@link checkPass} for a document read once, after writers settled (no before/after pair, no
 * reported status, no deletion): what the concurrent-writer rounds and the convergence check after
 * an interrupted run look at.
 */
export function checkSettledDocument(
  document: Document | undefined,
  expectation: Pick<PassRecord, "outcome" | "expectedForeign" | "desired" | "documentId">,
  identities: IdentityStore,
  secrets: readonly string[],
): string[] {
  return checkPass(
    { ...expectation, before: document, after: document, reportedStatus: undefined, deletedDuringPass: false, errorMessage: undefined },
    identities,
    secrets,
  );
}

/** Fields of the owned subtree and of its entries this hook reads and writes; any other field belongs to another writer. */
const knownSubtreeFields: ReadonlySet<string> = new Set(["identities", "earliestRecheckTime"]);
const knownEntryFields: ReadonlySet<string> = new Set(["resourceID", "clientId", "principalId", "retrievalError"]);

type Entry = Record<string, unknown>;

const hasIds = (entry: Entry | undefined): boolean => entry?.clientId !== undefined || entry?.principalId !== undefined;
const isNotFound = (retrievalError: unknown): boolean => typeof retrievalError === "string" && retrievalError.startsWith("ResourceNotFound");

/**
 * True when `after` holds a definitive answer about the identity, the only reason its stored IDs
 * may go: ARM's ResourceNotFound (and the identity is indeed absent from ARM), or a
 * 403 read with the cluster's own credential. (A read returning other values replaces them; that
 * is checked against ARM separately.)
 */
function isDefinitiveAnswer(after: Entry, inArm: boolean, credentialScope: "process" | "cluster"): boolean {
  const retrievalError = after.retrievalError;
  if (isNotFound(retrievalError)) return !inArm;
  return credentialScope === "cluster" && typeof retrievalError === "string" && retrievalError.includes("(HTTP 403)");
}

function statusViolations(status: Document, record: PassRecord, identities: IdentityStore, secrets: readonly string[]): string[] {
  const violations: string[] = [];
  const entries = (status.identities ?? {}) as Record<string, Entry>;
  const beforeSubtree = ownedStatus(record.before) ?? {};
  const beforeEntries = (beforeSubtree.identities ?? {}) as Record<string, Entry>;
  const theirs = record.otherWriterEntries ?? new Map<string, Document>();
  const credentialScope = record.credentialScope ?? "process";
  const storedKeys = Object.keys(entries).sort();
  const desiredKeys = [...record.desired.keys()].sort();
  if (!isDeepStrictEqual(storedKeys, desiredKeys)) {
    violations.push(`stored identities ${JSON.stringify(storedKeys)} differ from the desired set ${JSON.stringify(desiredKeys)}`);
  }
  // No entry records a failed lookup (ResourceNotFound is an answer, not a failure, as upstream counts it).
  let noEntryRecordsAFailure = true;
  for (const [key, entry] of Object.entries(entries)) {
    const otherWriters = theirs.get(key);
    if (otherWriters !== undefined) {
      if (!isDeepStrictEqual(entry, otherWriters)) {
        violations.push(`${key}: another writer changed this entry between our read and our write, yet the pass replaced it with its older result`);
      }
      noEntryRecordsAFailure &&= entry.retrievalError === undefined || isNotFound(entry.retrievalError);
      continue;
    }
    const inArm = identities.get(key);
    const previous = beforeEntries[key];
    const retrievalError = entry.retrievalError;
    if (typeof retrievalError === "string") {
      violations.push(...retrievalErrorViolations(key, retrievalError, secrets));
      if (isNotFound(retrievalError)) {
        if (inArm !== undefined) violations.push(`${key}: recorded ResourceNotFound but the identity exists in ARM`);
        if (hasIds(entry)) violations.push(`${key}: recorded ResourceNotFound but kept clientId/principalId`);
      } else {
        noEntryRecordsAFailure = false;
        // Not a definitive answer: either no IDs, or exactly the ones the entry had before the pass.
        if (hasIds(entry) && (previous === undefined || entry.clientId !== previous.clientId || entry.principalId !== previous.principalId)) {
          violations.push(
            `${key}: has a retrievalError beside clientId ${String(entry.clientId)}, which is not what the entry held before the pass (${String(previous?.clientId)})`,
          );
        }
      }
    } else if (inArm === undefined) {
      violations.push(`${key}: the identity does not exist in ARM, yet the entry has no retrievalError`);
    } else if (entry.clientId !== inArm.clientId || entry.principalId !== inArm.principalId) {
      violations.push(`${key}: stale values (stored ${String(entry.clientId)}, ARM has ${inArm.clientId})`);
    }
    const cleared =
      (previous?.clientId !== undefined && entry.clientId === undefined) || (previous?.principalId !== undefined && entry.principalId === undefined);
    if (cleared) {
      // An answer that says nothing about the identity keeps what was stored.
      if (!isDefinitiveAnswer(entry, inArm !== undefined, credentialScope)) {
        violations.push(
          `${key}: stored clientId/principalId were cleared without a definitive answer about the identity (${typeof retrievalError === "string" ? retrievalError : "no retrievalError"})`,
        );
      }
    }
    violations.push(...unknownFieldViolations(`${key}: entry`, previous ?? {}, entry, knownEntryFields));
  }
  violations.push(...unknownFieldViolations("the owned subtree", beforeSubtree, status, knownSubtreeFields));
  const recheck = status.earliestRecheckTime;
  if (recheck !== undefined && !noEntryRecordsAFailure) {
    violations.push("earliestRecheckTime is set although an entry records a failed lookup");
  }
  if (recheck === undefined && (record.outcome === "succeeded" || record.outcome === "msiFailed") && noEntryRecordsAFailure) {
    violations.push("every lookup succeeded but earliestRecheckTime is not set");
  }
  const otherWriterWrote = record.otherWriterRecordedStatus === true || theirs.size > 0;
  if (record.outcome === "lookupFailed" && noEntryRecordsAFailure && !otherWriterWrote) {
    violations.push("the pass reported lookup failures, but every persisted entry is resolved or not found");
  }
  return violations;
}

/** Fields of `before` not in `known` (another writer's) that `after` does not hold unchanged. */
function unknownFieldViolations(where: string, before: Document, after: Document, known: ReadonlySet<string>): string[] {
  return Object.keys(before)
    .filter((name) => !known.has(name) && !isDeepStrictEqual(after[name], before[name]))
    .map(
      (name) =>
        `${where}: field '${name}', which this hook does not know, was not kept (expected ${JSON.stringify(before[name])}, found ${JSON.stringify(after[name])})`,
    );
}

/** How the stored IDs of each entry that had them fared in one pass. */
export interface StoredIdFates {
  /** Another answer about the identity was needed: the lookup failed without one, and the IDs were kept beside its retrievalError. */
  keptBesideError: number;
  /** Cleared by a definitive answer (ARM's ResourceNotFound). */
  clearedByNotFound: number;
  /** Replaced by a read that returned other values. */
  replacedByRead: number;
  /** Unchanged after a successful read. */
  confirmed: number;
}

/**
 * Adds to `fates` how each entry of `before` that held IDs ended in `after`, for a pass that looked
 * every identity up; entries another writer changed are theirs and not counted.
 */
export function countStoredIdFates(fates: StoredIdFates, before: Document | undefined, after: Document | undefined, theirs: ReadonlySet<string>): void {
  const beforeEntries = (ownedStatus(before)?.identities ?? {}) as Record<string, Entry>;
  const afterEntries = (ownedStatus(after)?.identities ?? {}) as Record<string, Entry>;
  for (const [key, previous] of Object.entries(beforeEntries)) {
    const entry = afterEntries[key];
    if (!hasIds(previous) || entry === undefined || theirs.has(key)) continue;
    const sameIds = entry.clientId === previous.clientId && entry.principalId === previous.principalId;
    if (isNotFound(entry.retrievalError)) fates.clearedByNotFound += 1;
    else if (entry.retrievalError !== undefined) fates.keptBesideError += sameIds ? 1 : 0;
    else if (sameIds) fates.confirmed += 1;
    else fates.replacedByRead += 1;
  }
}

/** What the checker needs to know about one refresh (`read`, what `pulumi refresh` calls). */
export interface RefreshRecord {
  /** The document before and after the refresh; undefined when absent. */
  readonly before: Document | undefined;
  readonly after: Document | undefined;
  /** Document writes the sandbox counted for the document during the refresh. */
  readonly writes: number;
  /** What `read` returned, or undefined when it threw. */
  readonly returned: { readonly id: string; readonly status: unknown } | undefined;
  /** How a thrown error classifies, and its message. */
  readonly failure: { readonly outcome: PassOutcome; readonly message: string } | undefined;
  readonly documentId: string;
  /** Whether the cluster's HCPOpenShiftCluster document, and the subscription's own, were there during the refresh. */
  readonly clusterDocumentPresent: boolean;
  readonly subscriptionDocumentPresent: boolean;
  /** The drift lines `read` returned, when it returned. */
  readonly returnedDrift?: readonly string[];
}

/**
 * A refresh never writes, and never drops a resource whose cluster documents exist: `read` returns
 * an empty id (the engine then drops the resource) only when the ServiceProviderCluster and cluster
 * documents are both gone from a container that holds the subscription's document; with the cluster
 * document there it keeps the resource with a drift line; with nothing of the subscription there it
 * fails naming the settings. Any other failure must be one of the documented errors.
 */
export function checkRefresh(record: RefreshRecord, secrets: readonly string[]): string[] {
  const violations: string[] = [];
  if (record.writes > 0 || !isDeepStrictEqual(record.after, record.before)) {
    violations.push(`the refresh wrote to document ${record.documentId} (${record.writes} write(s)): a refresh never writes`);
  }
  const nothingThere = record.before === undefined && !record.clusterDocumentPresent && !record.subscriptionDocumentPresent;
  if (record.failure !== undefined) {
    if (record.failure.outcome === "crashed") violations.push(`the refresh failed with an undocumented error: ${record.failure.message}`);
    if (nothingThere && !record.failure.message.includes(":cosmosContainer'")) {
      violations.push(`nothing of the subscription is in the container, yet the refresh failed without naming cosmosContainer: ${record.failure.message}`);
    }
    violations.push(...secretViolations("refresh error message", record.failure.message, secrets));
    return violations;
  }
  const returned = record.returned;
  if (returned === undefined) {
    return [...violations, "the refresh neither returned nor failed"];
  }
  if (nothingThere) {
    violations.push(`nothing of the subscription is in the container, so a refresh cannot tell deleted from elsewhere, yet it returned id '${returned.id}'`);
  } else if (record.before !== undefined && returned.id === "") {
    violations.push(`the refresh returned an empty id although document ${record.documentId} exists: the engine would drop the resource from state`);
  } else if (record.before === undefined && record.clusterDocumentPresent) {
    if (returned.id === "") violations.push(`the refresh dropped a resource whose cluster document exists (document ${record.documentId} alone is missing)`);
    else if (!(record.returnedDrift ?? []).some((line) => line.includes(`${record.documentId} does not exist`))) {
      violations.push(
        `document ${record.documentId} is missing while its cluster document exists, and the refresh kept the resource without a drift line saying so`,
      );
    }
  } else if (record.before === undefined && returned.id !== "") {
    violations.push(`document ${record.documentId} and its cluster document are gone, yet the refresh kept the resource (id '${returned.id}')`);
  } else if (record.before !== undefined) {
    if (returned.id !== record.documentId) violations.push(`the refresh changed the resource id to '${returned.id}'`);
    if (typeof returned.status !== "string" || !reportsPersistedStatus(returned.status, ownedStatus(record.after) ?? {})) {
      violations.push("the status the refresh reported differs from the status persisted in Cosmos");
    }
  }
  return violations;
}

/** What the checker needs to know about one operation that must write nothing: a delete, or the create a rename starts with. */
export interface WritesNothingRecord {
  /** The ServiceProviderCluster document as stored (Cosmos system fields included) before and after; undefined when absent. */
  readonly before: Document | undefined;
  readonly after: Document | undefined;
  /** Document writes the sandbox counted for the cluster's documents during the operation. */
  readonly writes: number;
  /** The error message, when the operation failed. */
  readonly errorMessage: string | undefined;
  readonly documentId: string;
}

/**
 * A delete relinquishes the cluster: it succeeds, and the ServiceProviderCluster document is exactly
 * what it was, its etag, `_ts` and `cosmosMetadata.instanceVersion` included, with no write counted,
 * whatever the outputs it was handed, another writer's status or a rename left there, and whether
 * the documents are there at all.
 */
export function checkDelete(record: WritesNothingRecord, secrets: readonly string[]): string[] {
  return writesNothingViolations("a delete", record, secrets);
}

/**
 * The create a rename starts with (a resource of the same cluster, its status current) decides
 * nothing new: it succeeds, writes nothing, and reports the persisted status.
 */
export function checkRenameCreate(record: WritesNothingRecord & { readonly reportedStatus: string | undefined }, secrets: readonly string[]): string[] {
  const violations = writesNothingViolations("a rename's create", record, secrets);
  const status = ownedStatus(record.after);
  if (
    record.errorMessage === undefined &&
    (record.reportedStatus === undefined || status === undefined || !reportsPersistedStatus(record.reportedStatus, status))
  ) {
    violations.push("a rename's create reported a status that differs from the one persisted in Cosmos");
  }
  return violations;
}

function writesNothingViolations(operation: string, record: WritesNothingRecord, secrets: readonly string[]): string[] {
  const violations: string[] = [];
  if (record.errorMessage !== undefined) {
    violations.push(`${operation} failed: ${record.errorMessage}`);
    violations.push(...secretViolations(`${operation}'s error message`, record.errorMessage, secrets));
  }
  if (record.writes > 0) {
    violations.push(`${operation} wrote ${record.writes} time(s) to the cluster's documents: it must write nothing`);
  }
  if (!isDeepStrictEqual(record.after, record.before)) {
    violations.push(`${operation} changed ServiceProviderCluster document ${record.documentId}: ${firstDifference(record.before, record.after)}`);
  }
  return violations;
}

/** What one operation of a provider whose settings name a Cosmos resource that does not exist did. */
export interface SettingsFaultRecord {
  readonly operation: "refresh" | "update" | "delete";
  /** The setting that is wrong, and its wrong value. */
  readonly setting: string;
  readonly value: string;
  readonly before: Document | undefined;
  readonly after: Document | undefined;
  /** What `read` returned, when the operation was a refresh that returned. */
  readonly returnedId: string | undefined;
  readonly failure: { readonly outcome: PassOutcome; readonly message: string } | undefined;
}

/**
 * With a setting that names a database or container that does not exist, a refresh and an update
 * fail naming that setting and write nothing; a refresh never reads it as "document gone" (the
 * engine would drop the resource). A delete needs no setting: it writes nothing and succeeds (it
 * relinquishes the cluster, and the engine forgets the resource, by design).
 */
export function checkSettingsFault(record: SettingsFaultRecord, secrets: readonly string[]): string[] {
  const violations: string[] = [];
  if (!isDeepStrictEqual(record.after, record.before)) {
    violations.push(`${record.operation} with a wrong ${record.setting} changed the document: ${firstDifference(record.before, record.after)}`);
  }
  if (record.operation === "delete") {
    if (record.failure === undefined) return violations;
    return [
      ...violations,
      `delete with a wrong ${record.setting} failed (a delete writes nothing and needs no setting): ${record.failure.message}`,
      ...secretViolations("delete error message", record.failure.message, secrets),
    ];
  }
  if (record.failure === undefined) {
    const what =
      record.operation === "refresh" && record.returnedId === "" ? "returned an empty id: the engine would drop a resource whose document exists" : "succeeded";
    return [...violations, `${record.operation} with a wrong ${record.setting} ${what}`];
  }
  if (record.failure.outcome === "crashed") {
    violations.push(`${record.operation} with a wrong ${record.setting} failed with an undocumented error: ${record.failure.message}`);
  }
  if (!record.failure.message.includes(`:${record.setting}'`) || !record.failure.message.includes(record.value)) {
    violations.push(`${record.operation} with a wrong ${record.setting} failed without naming the setting and its value: ${record.failure.message}`);
  }
  return [...violations, ...secretViolations(`${record.operation} error message`, record.failure.message, secrets)];
}

/** A retrievalError must be one normalised line: code, optional status, short text; no URL, no secret. */
export function retrievalErrorViolations(key: string, retrievalError: string, secrets: readonly string[]): string[] {
  const violations: string[] = [];
  if (!retrievalErrorShape.test(retrievalError)) {
    violations.push(`${key}: retrievalError is not '<code> (HTTP <status>): <text>': ${retrievalError}`);
  }
  if (/[\r\n]/.test(retrievalError) || requestUrl.test(retrievalError) || /\bat .+:\d+:\d+\)?/.test(retrievalError)) {
    violations.push(`${key}: retrievalError carries a raw dump (newline, request URL or stack frame): ${retrievalError}`);
  }
  if (Array.from(retrievalError).length > 1024) {
    violations.push(`${key}: retrievalError is longer than 1024 code points`);
  }
  return [...violations, ...secretViolations(`${key}: retrievalError`, retrievalError, secrets)];
}

/** Each secret found in `text`, as a violation that does not repeat the secret. */
export function secretViolations(where: string, text: string, secrets: readonly string[]): string[] {
  const found = secrets.filter((secret) => secret.length >= 8 && text.includes(secret));
  const bearer = /Bearer\s+[A-Za-z0-9._~+/=-]{8,}/.test(text) ? ["a bearer token"] : [];
  return [...found.map((secret) => `${where} contains a secret (${secret.length} characters)`), ...bearer.map((what) => `${where} contains ${what}`)];
}

/** A short description of where two JSON values first differ. */
export function firstDifference(expected: unknown, actual: unknown, path = ""): string {
  if (typeof expected !== "object" || expected === null || typeof actual !== "object" || actual === null) {
    return `${path || "/"}: expected ${JSON.stringify(expected)}, found ${JSON.stringify(actual)}`;
  }
  const keys = new Set([...Object.keys(expected), ...Object.keys(actual)]);
  for (const key of keys) {
    const left = (expected as Record<string, unknown>)[key];
    const right = (actual as Record<string, unknown>)[key];
    if (!isDeepStrictEqual(left, right)) {
      return firstDifference(left, right, `${path}/${key}`);
    }
  }
  return `${path || "/"}: equal`;
}
