/**
 * The plain-script floor's part of `clusterServiceManagedIdentity` mode (floorWorker.ts, mode
 * `cluster`): per cluster, the same requests the hook makes before its lookups, written as a script
 * would write them, without the hook's error classes, caches or checks:
 *
 * 1. `POST <identity URL>&api-version=2024-01-01` with `{"identityIds":[<SMI>]}` and no token; the
 *    data plane answers 401 with the bearer challenge; the same POST again with the first-party
 *    application's token for the tenant the challenge names (one token per tenant for the process,
 *    through @azure/identity's ClientCertificateCredential over the bundle file);
 * 2. the answer's PKCS #12 `client_secret` turned into PEM by the hook's own reader
 *    (resources/azure/certificateBundle.ts), so that both sides pay the same for the archive;
 * 3. a ClientCertificateCredential for the SMI in its tenant, at the answer's authority (discovery
 *    and a token request at its first `getToken`), and an arm-msi client for the cluster's
 *    subscription over it, whose GETs the worker sends through the process's lookup limiter;
 * 4. for the MSI half (`msiManagedIdentities`), at the same time as 1–3: the same POST (unanswered,
 *    challenged, then with the first party's token) with every control plane operator identity and
 *    the SMI in `identityIds`, each answered entry's `client_id` and `object_id` kept by lowercased
 *    `resource_id`, as the hook's pass asks and reads it.
 */
import { ManagedServiceIdentityClient } from "@azure/arm-msi";
import type { TokenCredential } from "@azure/identity";
import { ClientCertificateCredential } from "@azure/identity";
import { readFileSync } from "node:fs";
import { Agent, request } from "node:https";
import { createSecureContext, rootCertificates } from "node:tls";
import { parseCertificateBundle } from "../../resources/azure/certificateBundle";
import type { UserAssignedIdentityReader } from "../../resources/azure/userAssignedIdentityReader";
import { createUserAssignedIdentityReader } from "../../resources/azure/userAssignedIdentityReader";
import { desiredFromClusterDocument } from "../../resources/core/clusterDocument";
import type { JsonObject } from "../../resources/core/json";
import type { MsiIdentityEntry, MsiManagedIdentities } from "../../resources/core/msiManagedIdentities";
import { nextRecheckTime } from "../../resources/core/statusHalf";
import type { Settings } from "../../resources/core/settings";

/** What the worker gets for one cluster: the reader of its SMI, and the credential behind it. */
/**
 * What a plain script reads from a cluster document for the MSI half: the identity URL, the SMI, and
 * the control plane operator identities keyed by lowercased ID (one per identity, as upstream
 * de-duplicates them); undefined when the URL or the SMI is not set yet.
 */
export function msiIdentitiesOf(
  clusterDocument: JsonObject,
): { readonly identityUrl: string; readonly serviceManagedIdentity: string; readonly operators: ReadonlyMap<string, string> } | undefined {
  const { identityUrl, serviceManagedIdentity, controlPlaneOperators } = desiredFromClusterDocument(clusterDocument);
  if (identityUrl === undefined || serviceManagedIdentity === undefined) return undefined;
  const operators = new Map<string, string>();
  for (const value of Object.values((controlPlaneOperators ?? {}) as Record<string, unknown>)) {
    if (typeof value === "string") operators.set(value.toLowerCase(), value);
  }
  return { identityUrl, serviceManagedIdentity, operators };
}

export interface ClusterFloorReader {
  readonly reader: UserAssignedIdentityReader;
  readonly credential: TokenCredential;
}

/** One cluster's credential chain, as a plain script walks it. */
export interface ClusterFloor {
  readerFor(clusterDocument: JsonObject, subscriptionId: string): Promise<ClusterFloorReader>;
  /** The MSI half of the cluster's status, from one data plane request for all its identities. */
  msiHalf(clusterDocument: JsonObject): Promise<MsiManagedIdentities>;
}

interface Answer {
  readonly status: number;
  readonly challenge: string | undefined;
  readonly body: string;
}

/** The floor's chain for these settings (mode `clusterServiceManagedIdentity` with a first-party bundle file). */
export function createClusterFloor(settings: Settings): ClusterFloor {
  const firstPartyIdentity = settings.firstParty;
  if (settings.credentialMode !== "clusterServiceManagedIdentity" || firstPartyIdentity === undefined || settings.dataPlaneAudience === undefined) {
    throw new Error("floor: mode cluster needs credentialMode clusterServiceManagedIdentity with the first-party settings and dataPlaneAudience");
  }
  const agent = new Agent({
    keepAlive: true,
    maxSockets: Math.max(16, settings.lookupConcurrency * 2),
    ...(settings.tlsCaFile === undefined
      ? {}
      : { secureContext: createSecureContext({ ca: [...rootCertificates, readFileSync(settings.tlsCaFile, "utf8")] }) }),
  });
  // Multi-tenant, as the hook builds it (azureAdapters.ts): the challenge names the cluster's tenant, not the first party's.
  const firstParty = new ClientCertificateCredential(
    firstPartyIdentity.tenantId,
    firstPartyIdentity.clientId,
    { certificatePath: firstPartyIdentity.certificateFile },
    { authorityHost: settings.authorityHost, disableInstanceDiscovery: true, sendCertificateChain: true, agent, additionallyAllowedTenants: ["*"] },
  );
  const scope = `${settings.dataPlaneAudience.replace(/\/+$/, "")}/.default`;
  const tokensByTenant = new Map<string, Promise<string>>();
  const firstPartyToken = (tenantId: string): Promise<string> => {
    let token = tokensByTenant.get(tenantId);
    if (token === undefined) {
      token = firstParty.getToken(scope, { tenantId }).then((answer) => answer.token);
      tokensByTenant.set(tenantId, token);
    }
    return token;
  };
  // A kept-alive socket the sandbox closed as it went idle fails the next request on it with
  // ECONNRESET ("socket hang up"): sent again on a fresh socket, once, as Node's documentation of
  // `request.reusedSocket` advises and as the hook's SDK pipeline retries a reset connection.
  const post = (url: URL, body: string, token: string | undefined): Promise<Answer> =>
    postOnce(url, body, token).catch((error: unknown) => {
      if ((error as { reusedSocket?: boolean; code?: string }).reusedSocket === true && (error as { code?: string }).code === "ECONNRESET") {
        return postOnce(url, body, token);
      }
      throw error;
    });
  const postOnce = (url: URL, body: string, token: string | undefined): Promise<Answer> =>
    new Promise((resolve, reject) => {
      const sent = request(
        url,
        {
          method: "POST",
          agent,
          headers: { "content-type": "application/json", accept: "application/json", ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) },
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on("data", (chunk: Buffer) => chunks.push(chunk));
          response.on("end", () =>
            resolve({ status: response.statusCode ?? 0, challenge: response.headers["www-authenticate"], body: Buffer.concat(chunks).toString("utf8") }),
          );
          response.on("error", reject);
        },
      );
      sent.on("error", (error: Error) => reject(Object.assign(error, { reusedSocket: sent.reusedSocket })));
      sent.end(body);
    });
  /** One data plane request for `identityIds` at the cluster's identity URL, challenged first as the hook's is. */
  const askDataPlane = async (identityUrl: string, identityIds: readonly string[]): Promise<Array<Record<string, string | null>>> => {
    const url = new URL(identityUrl);
    url.searchParams.set("api-version", "2024-01-01");
    const body = JSON.stringify({ identityIds });
    let answer = await post(url, body, undefined);
    if (answer.status === 401) {
      const tenantId = /authorization="?https:\/\/[^/]+\/([^/",\s]+)/i.exec(answer.challenge ?? "")?.[1];
      if (tenantId === undefined) throw new Error("floor: the data plane's 401 has no bearer challenge");
      answer = await post(url, body, await firstPartyToken(tenantId));
    }
    if (answer.status !== 200) throw new Error(`floor: the data plane answered ${answer.status}: ${answer.body.slice(0, 200)}`);
    return (JSON.parse(answer.body) as { explicit_identities: Array<Record<string, string | null>> }).explicit_identities;
  };
  return {
    async msiHalf(clusterDocument) {
      const identities = msiIdentitiesOf(clusterDocument);
      if (identities === undefined) throw new Error("floor: the cluster document has no identity URL or SMI");
      const { identityUrl, serviceManagedIdentity, operators } = identities;
      const answered = new Map(
        (await askDataPlane(identityUrl, [...operators.values(), serviceManagedIdentity])).map((entry) => [String(entry.resource_id).toLowerCase(), entry]),
      );
      const entryOf = (resourceId: string): MsiIdentityEntry => {
        const entry = answered.get(resourceId.toLowerCase());
        if (entry === undefined) throw new Error(`floor: the data plane's answer holds nothing for ${resourceId}`);
        return {
          resourceId,
          ...(entry.client_id === null ? {} : { clientId: entry.client_id }),
          ...(entry.object_id === null ? {} : { principalId: entry.object_id }),
        };
      };
      const controlPlaneOperatorsIdentities = Object.fromEntries([...operators].map(([key, resourceId]) => [key, entryOf(resourceId)]));
      return {
        earliestRecheckTime: nextRecheckTime(new Date(), Math.random),
        ...(operators.size === 0 ? {} : { controlPlaneOperatorsIdentities }),
        serviceManagedIdentity: entryOf(serviceManagedIdentity),
      };
    },
    async readerFor(clusterDocument, subscriptionId) {
      const { identityUrl, serviceManagedIdentity } = desiredFromClusterDocument(clusterDocument);
      if (identityUrl === undefined || serviceManagedIdentity === undefined) throw new Error("floor: the cluster document has no identity URL or SMI");
      const entry = (await askDataPlane(identityUrl, [serviceManagedIdentity]))[0] as Record<string, string>;
      const credential = new ClientCertificateCredential(
        entry.tenant_id,
        entry.client_id,
        { certificate: parseCertificateBundle(Buffer.from(entry.client_secret, "base64"), "floor: client_secret").pem },
        { authorityHost: entry.authentication_endpoint, disableInstanceDiscovery: true, sendCertificateChain: true, agent },
      );
      const client = new ManagedServiceIdentityClient(credential, subscriptionId, {
        endpoint: settings.armEndpoint,
        credentialScopes: [settings.armScope],
        agent,
        retryOptions: { maxRetries: 0 },
      });
      return { reader: createUserAssignedIdentityReader(() => client), credential };
    },
  };
}
