/**
 * The floor of an engine run: a plain script, in its own process like the provider host, doing
 * the same Azure work through the same SDK clients (resources/provider/azureAdapters.ts: one credential,
 * one keep-alive agent, the process-wide lookup limiter) with no engine around it.
 *
 * Modes (argv[2]): `sync` reads each ServiceProviderCluster document, GETs its identities through
 * the limiter and patches the status with If-Match, every cluster at once; `read` reads each
 * document once. The plan (argv[3]) is a JSON file of {@link FloorCluster}. Settings come from
 * the ARO_HCP_* environment. Prints one JSON line: {@link FloorWorkerReport}.
 */
import { readFileSync } from "node:fs";
import { parseResourceIdOfType, userAssignedIdentityResourceType } from "../../resources/core/azureResourceId";
import { sharedAzureAdapters } from "../../resources/provider/azureAdapters";
import type { DataPlaneOperatorManagedIdentityEntry } from "../../resources/core/serviceProviderClusterDocument";
import { statusPatchOperations } from "../../resources/core/serviceProviderClusterDocument";
import { nextRecheckTime } from "../../resources/core/identityStatus";
import { readSettings } from "../../resources/core/settings";
import { processCpuTimeInMs } from "./statistics";

/** One cluster of the floor's plan. */
export interface FloorCluster {
  readonly partitionKey: string;
  readonly documentId: string;
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

async function main(): Promise<void> {
  const mode = process.argv[2];
  const plan = JSON.parse(readFileSync(process.argv[3] ?? "", "utf8")) as FloorCluster[];
  const adapters = sharedAzureAdapters(readSettings(undefined, process.env));
  const started = performance.now();
  let lookups = 0;
  await Promise.all(
    plan.map(async (cluster) => {
      const stored = await adapters.documentStore.readDocument(cluster.partitionKey, cluster.documentId);
      if (mode === "read") {
        return;
      }
      if (stored === undefined) {
        throw new Error(`floor: document ${cluster.documentId} is missing`);
      }
      const identities: Record<string, DataPlaneOperatorManagedIdentityEntry> = {};
      await Promise.all(
        cluster.identityResourceIds.map((resourceId) =>
          adapters.limiter.run(async () => {
            const parsed = parseResourceIdOfType(resourceId, userAssignedIdentityResourceType);
            if (!parsed.ok) {
              throw new TypeError(`floor: ${resourceId} ${parsed.reason}`);
            }
            const values = await adapters.userAssignedIdentityReader.getUserAssignedIdentity(parsed.resourceId, { abortSignal: AbortSignal.timeout(30_000) });
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
      await adapters.documentStore.patchDocument(
        cluster.partitionKey,
        cluster.documentId,
        statusPatchOperations(stored.document, status, stored.etag),
        stored.etag,
      );
    }),
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
