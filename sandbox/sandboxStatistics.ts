/** Counters of the fake ARM server. */
export interface ArmStatistics {
  /** Every GET request received, whatever the outcome. */
  getRequests: number;
  /** GET requests per identity, keyed by the lowercased full ARM ID. */
  requestsByIdentity: Record<string, number>;
  /** Requests being handled right now. */
  inFlight: number;
  /** The highest `inFlight` seen since the last reset. */
  maxInFlight: number;
  /** Responses by HTTP status code (connection resets count as status 0). */
  responsesByStatus: Record<string, number>;
  /** The sum of all Retry-After seconds the server asked for. */
  retryAfterSecondsRequested: number;
}

/** One Cosmos document write that carried no `if-match` header. */
export interface UnconditionalWrite {
  method: string;
  path: string;
}

/** Counters of the Cosmos server. Only document (`/docs`) traffic is split into reads and writes. */
export interface CosmosStatistics {
  /** Every request received, including metadata and queries. */
  requests: number;
  /** Documents read: GET requests on documents (point reads and read feeds) plus each Read operation of a batch. */
  documentReads: number;
  /** Batch or bulk requests made only of Read operations (each operation also counts in `documentReads`). */
  documentReadBatches: number;
  /** Document queries (POST with `x-ms-documentdb-isquery`). */
  documentQueries: number;
  /** Document writes by method: POST (create, upsert, batch), PUT, PATCH, DELETE. */
  documentWritesByMethod: Record<string, number>;
  /** Document writes per document id (creates are keyed by the id in their body). */
  documentWritesByDocument: Record<string, number>;
  /** Document reads (point reads and batched Read operations) per document id. */
  documentReadsByDocument: Record<string, number>;
  /** Every document write that lacked an `if-match` header, in order. */
  writesWithoutIfMatch: UnconditionalWrite[];
  /** Responses by HTTP status code (connection resets count as status 0). */
  responsesByStatus: Record<string, number>;
  /** Requests rejected for a missing or wrong Authorization header. */
  unauthorized: number;
  /** Authorized requests by how: `master` (account key) or `aad` (Entra ID token). */
  authorizedByKind: Record<string, number>;
  inFlight: number;
  maxInFlight: number;
}

/** Counters of the managed-identity token endpoint. */
export interface TokenStatistics {
  /** Every request received. */
  requests: number;
  /** Tokens handed out. */
  tokensIssued: number;
  /** Responses by HTTP status code. */
  responsesByStatus: Record<string, number>;
}

/** Counters of the sandbox Entra (client credentials token endpoint and its discovery document). */
export interface EntraStatistics {
  /** Every request received, discovery included. */
  requests: number;
  /** Discovery (openid-configuration) requests. */
  discoveryRequests: number;
  /** Token requests per tenant (lowercased tenant ID as in the path). */
  tokenRequestsByTenant: Record<string, number>;
  /** Token requests per `<tenant>/<client ID>` (lowercased). */
  tokenRequestsByClient: Record<string, number>;
  /** Tokens issued per `<tenant>/<client ID>` (lowercased). */
  tokensIssuedByClient: Record<string, number>;
  tokensIssued: number;
  /** Client assertions by signature algorithm, `+x5c` when they carried the certificate chain (e.g. `PS256+x5c`). */
  assertionAlgorithms: Record<string, number>;
  /** Refusals by AADSTS code, e.g. `700027`. */
  errorsByCode: Record<string, number>;
  responsesByStatus: Record<string, number>;
}

/** Counters of the Managed Identities data plane. */
export interface DataPlaneStatistics {
  /** Every request received. */
  requests: number;
  /** Requests per cluster, keyed by the lowercased cluster ARM ID (unknown paths are not counted here). */
  requestsByCluster: Record<string, number>;
  /** Credentials handed out (one per identity in a 200 answer). */
  credentialsIssued: number;
  /** Requests answered 401 for want of a token: the challenge. */
  challenges: number;
  responsesByStatus: Record<string, number>;
}

/** A snapshot of every sandbox counter. */
export interface SandboxStatisticsSnapshot {
  arm: ArmStatistics;
  cosmos: CosmosStatistics;
  token: TokenStatistics;
  entra: EntraStatistics;
  dataPlane: DataPlaneStatistics;
}

function emptyArm(): ArmStatistics {
  return {
    getRequests: 0,
    requestsByIdentity: {},
    inFlight: 0,
    maxInFlight: 0,
    responsesByStatus: {},
    retryAfterSecondsRequested: 0,
  };
}

function emptyCosmos(): CosmosStatistics {
  return {
    requests: 0,
    documentReads: 0,
    documentReadBatches: 0,
    documentQueries: 0,
    documentWritesByMethod: {},
    documentWritesByDocument: {},
    documentReadsByDocument: {},
    writesWithoutIfMatch: [],
    responsesByStatus: {},
    unauthorized: 0,
    authorizedByKind: {},
    inFlight: 0,
    maxInFlight: 0,
  };
}

function emptyToken(): TokenStatistics {
  return { requests: 0, tokensIssued: 0, responsesByStatus: {} };
}

function emptyEntra(): EntraStatistics {
  return {
    requests: 0,
    discoveryRequests: 0,
    tokenRequestsByTenant: {},
    tokenRequestsByClient: {},
    tokensIssuedByClient: {},
    tokensIssued: 0,
    assertionAlgorithms: {},
    errorsByCode: {},
    responsesByStatus: {},
  };
}

function emptyDataPlane(): DataPlaneStatistics {
  return { requests: 0, requestsByCluster: {}, credentialsIssued: 0, challenges: 0, responsesByStatus: {} };
}

/**
 * Increments a counter in a string-keyed record.
 *
 * @param record - The record to change.
 * @param key - The counter's key.
 * @param amount - How much to add (default 1).
 */
export function increment(record: Record<string, number>, key: string, amount = 1): void {
  record[key] = (record[key] ?? 0) + amount;
}

/**
 * The live counters of all sandbox servers. The servers mutate the sections directly; callers
 * outside the sandbox use {@link SandboxStatistics.snapshot}.
 */
export class SandboxStatistics {
  arm: ArmStatistics = emptyArm();
  cosmos: CosmosStatistics = emptyCosmos();
  token: TokenStatistics = emptyToken();
  entra: EntraStatistics = emptyEntra();
  dataPlane: DataPlaneStatistics = emptyDataPlane();

  /** @returns A deep copy of every counter. */
  snapshot(): SandboxStatisticsSnapshot {
    return structuredClone({ arm: this.arm, cosmos: this.cosmos, token: this.token, entra: this.entra, dataPlane: this.dataPlane });
  }

  /** Sets every counter back to zero, keeping the current in-flight numbers. */
  reset(): void {
    const armInFlight = this.arm.inFlight;
    const cosmosInFlight = this.cosmos.inFlight;
    this.arm = { ...emptyArm(), inFlight: armInFlight, maxInFlight: armInFlight };
    this.cosmos = { ...emptyCosmos(), inFlight: cosmosInFlight, maxInFlight: cosmosInFlight };
    this.token = emptyToken();
    this.entra = emptyEntra();
    this.dataPlane = emptyDataPlane();
  }
}
