/**
 * The floor of an engine run: a plain script, in its own process like the provider host, doing
 * the same Azure work through the same SDK clients (resources/provider/azureAdapters.ts: one credential,
 * one keep-alive agent, the process-wide lookup limiter) with no engine around it.
 *
 * Modes (argv[2]): `sync` reads each cluster's two documents (HCPOpenShiftCluster and
 * ServiceProviderCluster), GETs its data plane operator identities and, for the MSI half, its
 * control plane operator identities and service managed identity (as the hook's processCredential
 * mode reads them) through the limiter, and patches both halves with If-Match, every cluster at
 * once; `read` reads each ServiceProviderCluster document once; `cluster` does what `sync` does as
 * each cluster's own service managed identity (clusterFloor.ts), asking the data plane for the MSI
 * half instead. The plan (argv[3]) is a JSON file of {@link FloorCluster}. Settings come from
 * the ARO_HCP_* environment. Prints one JSON line: {@link FloorWorkerReport}.
 */
import { readFileSync } from "node:fs";
import type { TokenCredential } from "@azure/identity";
import type { UserAssignedIdentityReader } from "../../resources/azure/userAssignedIdentityReader";
import { createConcurrencyLimiter } from "../../resources/sync/concurrencyLimiter";
import { createClusterFloor, msiIdentitiesOf } from "./clusterFloor";

/**
 * Mode `cluster` works on this many clusters at a time, the engine's slots at the project's doors
 * (cli/engine.ts, PULUMI_PARALLEL 16). Every cluster at once, as the other modes go, made the floor
 * twice as slow: 500 chains of data plane and Entra calls in flight together held every lookup back
 * until most of them were done (500 clusters: 14.6 s at once, 11.2 s at 64, 7.3 s at 16).
 */
const clustersInFlight = 16;
import { parseResourceIdOfType, userAssignedIdentityResourceType } from "../../resources/core/azureResourceId";
import { sharedAzureAdapters } from "../../resources/provider/azureAdapters";
import type { DataPlaneOperatorManagedIdentityEntry } from "../../resources/core/serviceProviderClusterDocument";
import { identityStatusPatchOperations } from "../../resources/core/serviceProviderClusterDocument";
import type { MsiIdentityEntry, MsiManagedIdentities } from "../../resources/core/msiManagedIdentities";
import type { ParsedResourceId } from "../../resources/core/azureResourceId";
import type { JsonObject } from "../../resources/core/json";
import { nextRecheckTime } from "../../resources/core/statusHalf";
import { readSettings } from "../../resources/core/settings";
import { processCpuTimeInMs } from "./statistics";

/** One cluster of the floor's plan. */
export interface FloorCluster {
  readonly partitionKey: string;
  readonly documentId: string;
  /** The HCPOpenShiftCluster document (mode `cluster` reads its identity URL and SMI there). */
  readonly clusterDocumentId: string;
  readonly identityResourceIds: readonly string[];
}

/** What the worker prints. */
export interface FloorWorkerReport {
  /** From the first request to the last answer, in this process. */
  readonly workTimeInMs: number;
  readonly clusters: number;
  readonly lookups: number;
  /** Most lookups the process-wide limiter ever let run at once. */
  readonly limiterPeak: number;
  /** CPU time of this process, start to report (its SDK clients, TLS and module loading). */
  readonly cpuTimeInMs: number;
}

/**
 * The MSI half as the hook's processCredential mode reads it: each control plane operator identity
 * (one per lowercased ID) and the service managed identity through ARM, all at once; undefined when
 * the cluster document has no identity URL yet (the hook skips the half then).
 */
async function armMsiHalf(
  clusterDocument: JsonObject,
  read: (identity: ParsedResourceId) => Promise<{ readonly clientId?: string | null; readonly principalId?: string | null } | undefined>,
): Promise<MsiManagedIdentities | undefined> {
  const identities = msiIdentitiesOf(clusterDocument);
  if (identities === undefined) return undefined;
  const { serviceManagedIdentity, operators } = identities;
  const entryOf = async (resourceId: string): Promise<MsiIdentityEntry> => {
    const parsed = parseResourceIdOfType(resourceId, userAssignedIdentityResourceType);
    if (!parsed.ok) throw new TypeError(`floor: ${resourceId} ${parsed.reason}`);
    const values = await read(parsed.resourceId);
    return {
      resourceId,
      ...(values?.clientId == null ? {} : { clientId: values.clientId }),
      ...(values?.principalId == null ? {} : { principalId: values.principalId }),
    };
  };
  const [operatorEntries, smi] = await Promise.all([
    Promise.all([...operators].map(async ([key, resourceId]) => [key, await entryOf(resourceId)] as const)),
    entryOf(serviceManagedIdentity),
  ]);
  return {
    earliestRecheckTime: nextRecheckTime(new Date(), Math.random),
    ...(operators.size === 0 ? {} : { controlPlaneOperatorsIdentities: Object.fromEntries(operatorEntries) }),
    serviceManagedIdentity: smi,
  };
}

async function main(): Promise<void> {
  const mode = process.argv[2];
  const plan = JSON.parse(readFileSync(process.argv[3] ?? "", "utf8")) as FloorCluster[];
  const settings = readSettings(undefined, process.env);
  const adapters = sharedAzureAdapters(settings);
  const clusterFloor = mode === "cluster" ? createClusterFloor(settings) : undefined;
  const clusterSlots = createConcurrencyLimiter(clusterFloor === undefined ? Math.max(1, plan.length) : clustersInFlight);
  const started = performance.now();
  let lookups = 0;
  await Promise.all(
    plan.map((cluster) =>
      clusterSlots.run(async () => {
        let reader: UserAssignedIdentityReader = adapters.userAssignedIdentityReader;
        let credential: TokenCredential | undefined;
        let msiHalf: Promise<MsiManagedIdentities | undefined> | undefined;
        if (mode === "read") {
          await adapters.documentStore.readDocument(cluster.partitionKey, cluster.documentId);
          return;
        }
        // Both documents at once, as the hook's pass reads them; the cluster's names its SMI and identity URL.
        const [clusterDocument, serviceProviderCluster] = await Promise.all([
          adapters.documentStore.readDocument(cluster.partitionKey, cluster.clusterDocumentId),
          adapters.documentStore.readDocument(cluster.partitionKey, cluster.documentId),
        ]);
        if (clusterDocument === undefined) throw new Error(`floor: cluster document ${cluster.clusterDocumentId} is missing`);
        const stored = serviceProviderCluster;
        // The MSI half runs beside the data plane operators' chain, as in the hook's pass: through ARM
        // with the process credential (processCredential mode), or from the data plane (cluster mode).
        if (clusterFloor === undefined) {
          msiHalf = armMsiHalf(clusterDocument.document, async (identity) => {
            const values = await adapters.limiter.run(() => reader.getUserAssignedIdentity(identity, { abortSignal: AbortSignal.timeout(30_000) }));
            lookups += 1;
            return values;
          });
          msiHalf.catch(() => undefined);
        } else {
          msiHalf = clusterFloor.msiHalf(clusterDocument.document);
          msiHalf.catch(() => undefined);
          ({ reader, credential } = await clusterFloor.readerFor(clusterDocument.document, cluster.partitionKey));
        }
        if (stored === undefined) {
          throw new Error(`floor: document ${cluster.documentId} is missing`);
        }
        // The SMI's ARM token before the cluster's GETs queue for the limiter, so no slot waits for
        // Entra; asked as the clients' bearer-token policy asks (CAE on), so their GETs find it cached.
        if (credential !== undefined) await credential.getToken(settings.armScope, { enableCae: true });
        const identities: Record<string, DataPlaneOperatorManagedIdentityEntry> = {};
        await Promise.all(
          cluster.identityResourceIds.map((resourceId) =>
            adapters.limiter.run(async () => {
              const parsed = parseResourceIdOfType(resourceId, userAssignedIdentityResourceType);
              if (!parsed.ok) {
                throw new TypeError(`floor: ${resourceId} ${parsed.reason}`);
              }
              const values = await reader.getUserAssignedIdentity(parsed.resourceId, { abortSignal: AbortSignal.timeout(30_000) });
              lookups += 1;
              identities[resourceId.toLowerCase()] = {
                resourceID: resourceId,
                clientId: values?.clientId ?? undefined,
                principalId: values?.principalId ?? undefined,
              };
            }),
          ),
        );
        const status = { identities, earliestRecheckTime: nextRecheckTime(new Date(), Math.random) };
        const msi = msiHalf === undefined ? undefined : await msiHalf;
        await adapters.documentStore.patchDocument(
          cluster.partitionKey,
          cluster.documentId,
          identityStatusPatchOperations(stored.document, { dataPlane: status, ...(msi === undefined ? {} : { msi }) }, stored.etag),
          stored.etag,
        );
      }),
    ),
  );
  const report: FloorWorkerReport = {
    workTimeInMs: performance.now() - started,
    clusters: plan.length,
    lookups,
    limiterPeak: adapters.limiter.peak,
    cpuTimeInMs: processCpuTimeInMs(),
  };
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
