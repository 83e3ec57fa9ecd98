/**
 * Wires the fakes into SyncDependencies for one test: an in-memory store, a scripted reader, a
 * real limiter, a fixed clock whose sleep advances it, and a fixed random source.
 */
import { parseResourceIdOfType } from "../../resources/core/azureResourceId";
import type { ParsedResourceId } from "../../resources/core/azureResourceId";
import { createConcurrencyLimiter } from "../../resources/sync/concurrencyLimiter";
import type { ConcurrencyLimiter } from "../../resources/sync/concurrencyLimiter";
import type { SyncDependencies, SyncOptions } from "../../resources/sync/syncDependencies";
import type { JsonObject } from "../../resources/core/json";
import { buildClusterDocument, buildSubscriptionDocument, clusterResourceIdFor, clusterResourceType, defaultCluster, fixedNow } from "../fixtures/documents";
import { goLowerCase } from "../../sandbox/goLowerCase";
import { documentIdFor } from "../../sandbox/documentBuilders";
import type { ClusterCoordinates } from "../fixtures/documents";
import { FakeClock } from "./fakeClock";
import { InMemoryDocumentStore } from "./inMemoryDocumentStore";
import type { IdentityScript } from "./scriptedUserAssignedIdentityReader";
import { ScriptedUserAssignedIdentityReader } from "./scriptedUserAssignedIdentityReader";
import type { MsiAnswerSource } from "../../resources/azure/managedIdentitiesDataPlane";
import { standInMsiAnswers } from "../../resources/azure/managedIdentitiesDataPlane";

/**
 * The IDs the harness's default MSI answer gives every identity (upstream's stand-in shape). The
 * fixtures' documents hold other IDs, so the default answer may replace them: fixedIdentity's
 * guard has tests of its own (test/unit/sync/msiHalf.test.ts).
 */
export const standInIds = { clientId: "5a5a5a5a-0000-4000-8000-00000000c1d0", principalId: "5a5a5a5a-0000-4000-8000-0000000091d0" };

export const defaultSyncOptions: SyncOptions = {
  lookupTimeoutInMs: 5_000,
  documentWaitInMs: 10_000,
  documentPollIntervalInMs: 1_000,
  maxWriteAttempts: 3,
  idsOnLookupFailure: "keep",
};

export interface Harness {
  readonly store: InMemoryDocumentStore;
  readonly reader: ScriptedUserAssignedIdentityReader;
  readonly limiter: ConcurrencyLimiter;
  readonly clock: FakeClock;
  readonly dependencies: SyncDependencies;
}

export function createHarness(
  options: {
    documents?: readonly JsonObject[];
    identities?: Readonly<Record<string, IdentityScript>>;
    syncOptions?: Partial<SyncOptions>;
    concurrency?: number;
    random?: () => number;
    readerDelayInMs?: number;
    /** Every pass reads the cluster document; the fixture cluster's is added unless one is given or this says "absent". */
    clusterDocument?: "absent";
    /** The fixture subscription's document is added (as the resource provider keeps it) unless this says "absent". */
    subscriptionDocument?: "absent";
    /** Where the MSI half's answer comes from: a stand-in with {@link standInIds} by default; "arm" reads each identity through the scripted reader. */
    msiAnswers?: MsiAnswerSource | "arm";
  } = {},
): Harness {
  const documents = options.documents ?? [];
  const hasClusterDocument = documents.some(
    (document) => typeof document.resourceType === "string" && goLowerCase(document.resourceType) === goLowerCase(clusterResourceType),
  );
  const store = new InMemoryDocumentStore([
    ...(hasClusterDocument || options.clusterDocument === "absent" ? [] : [buildClusterDocument()]),
    ...documents,
    ...(options.subscriptionDocument === "absent" ? [] : [buildSubscriptionDocument()]),
  ]);
  const reader = new ScriptedUserAssignedIdentityReader(options.identities ?? {}, options.readerDelayInMs ?? 1);
  const limiter = createConcurrencyLimiter(options.concurrency ?? 4);
  const clock = new FakeClock(fixedNow);
  const dependencies: SyncDependencies = {
    documentStore: store,
    userAssignedIdentityReader: reader,
    limiter,
    now: clock.now,
    random: options.random ?? (() => 0),
    sleep: clock.sleep,
    options: { ...defaultSyncOptions, ...options.syncOptions },
    ...(options.msiAnswers === "arm" ? {} : { msiAnswers: options.msiAnswers ?? standInMsiAnswers({ ...standInIds, overwriteAllowed: true }) }),
  };
  return { store, reader, limiter, clock, dependencies };
}

/** The parsed cluster ID of the fixture cluster (or the given one). */
export function parsedCluster(cluster: ClusterCoordinates = defaultCluster): ParsedResourceId {
  const parsed = parseResourceIdOfType(clusterResourceIdFor(cluster), clusterResourceType);
  if (!parsed.ok) throw new Error(parsed.reason);
  return parsed.resourceId;
}

/**
 * Makes the fixture cluster's document declare `identityIds` as its `dataPlaneOperators` (operator
 * `operator-<i>` for the i-th), when the store holds that document: the cluster document is the
 * authority on the desired set, so a pass whose inputs name a set runs only where the document
 * names the same. A document a test left out (or soft-deleted) stays as it is.
 */
export function declareInClusterDocument(harness: Pick<Harness, "store">, identityIds: readonly string[], cluster: ClusterCoordinates = defaultCluster): void {
  const partitionKey = goLowerCase(cluster.subscriptionId);
  const id = documentIdFor(clusterResourceIdFor(cluster));
  if (harness.store.get(partitionKey, id) === undefined) return;
  harness.store.mutate(partitionKey, id, (document) => {
    const properties = document.properties as JsonObject;
    const customer = (properties.customerProperties ??= {}) as JsonObject;
    const platform = (customer.platform ??= {}) as JsonObject;
    const authentication = (platform.operatorsAuthentication ??= {}) as JsonObject;
    const identities = (authentication.userAssignedIdentities ??= {}) as JsonObject;
    identities.dataPlaneOperators = Object.fromEntries(identityIds.map((identityId, index) => [`operator-${index}`, identityId]));
  });
}
