/** The servers whose requests can be recorded. */
export type RecordedTarget = "dataPlane" | "entra" | "arm";

/** Who a bearer token was issued to and for what, as a server saw it. Never the token itself. */
export interface RecordedToken {
  /** The resource the token was issued for (its audience). */
  audience: string;
  /** The issuing tenant, absent for a token of the managed-identity endpoint. */
  tenantId?: string;
  /** The client (application) ID, when known. */
  clientId?: string;
  /** `application`, `managedIdentity`, or `managedIdentityEndpoint` (the process credential's endpoint). */
  kind: "application" | "managedIdentity" | "managedIdentityEndpoint";
}

/** The header of a client assertion, without its payload's values or signature. */
export interface RecordedAssertionHeader {
  alg?: string;
  typ?: string;
  /** The thumbprint fields as sent (public values: hashes of the certificate). */
  x5t?: string;
  "x5t#S256"?: string;
  /** How many certificates `x5c` held (absent when there was none). */
  x5cCertificates?: number;
  /** Every header field name, sorted. */
  fields: string[];
  /** Every claim name of the assertion's payload, sorted (their values are not kept). */
  claimNames?: string[];
}

/** The form fields of a token request that carry no secret. */
export interface RecordedTokenForm {
  grant_type?: string;
  scope?: string;
  client_id?: string;
  client_assertion_type?: string;
  /** The client capabilities and challenge claims asked for (JSON), and whether client info was (public values). */
  claims?: string;
  client_info?: string;
  /** Field names sent, sorted (the assertion's and any secret's names, never their values). */
  fields: string[];
  /** The client assertion's header, when one was sent and could be read. */
  assertionHeader?: RecordedAssertionHeader;
}

/** One request a sandbox server received, with nothing secret in it. */
export interface RecordedRequest {
  target: RecordedTarget;
  /** When the answer was sent (ISO 8601). */
  at: string;
  method: string;
  /** The path as received (not decoded). */
  path: string;
  /** The query as received, without `?` (empty when none). */
  query: string;
  /** The request's `content-type` header, when sent. */
  contentType?: string;
  /** The status the server answered. */
  status: number;
  /** The error code of a refusal, when the answer had one. */
  errorCode?: string;
  /** The data plane's request body, parsed as JSON (or the text when it is not JSON). */
  body?: unknown;
  /** Entra: the token request's form, secrets left out. */
  form?: RecordedTokenForm;
  /** A bearer request: the presented token's audience, tenant and client (when the token was valid). */
  token?: RecordedToken;
}

/** The most entries a recording keeps; later requests are counted in `dropped`. */
export const maxRecordedRequests = 20_000;

/**
 * Records what the data plane, the Entra token endpoint and ARM receive, between `start` and
 * `stop`, for tests that compare the requests of two clients. Entries hold no secret: the servers
 * pass only the fields above (no token, assertion payload or signature, client secret).
 */
export class RequestRecorder {
  private recording = false;
  private entries: RecordedRequest[] = [];
  private droppedEntries = 0;

  /** Starts a new recording, dropping the previous one. */
  start(): void {
    this.recording = true;
    this.entries = [];
    this.droppedEntries = 0;
  }

  /** Stops recording; what was recorded stays readable. */
  stop(): void {
    this.recording = false;
  }

  /** Whether requests are being recorded. */
  get active(): boolean {
    return this.recording;
  }

  /**
   * @param entry - What a server received (called by the servers; ignored when not recording).
   */
  record(entry: RecordedRequest): void {
    if (!this.recording) return;
    if (this.entries.length >= maxRecordedRequests) {
      this.droppedEntries += 1;
      return;
    }
    this.entries.push(structuredClone(entry));
  }

  /** @returns The recording so far: whether it runs, its entries in order of answer, and how many were dropped. */
  snapshot(): { recording: boolean; requests: RecordedRequest[]; dropped: number } {
    return { recording: this.recording, requests: structuredClone(this.entries), dropped: this.droppedEntries };
  }
}

/**
 * @param issued - A valid token as the registry holds it.
 * @returns What a recording keeps of it.
 */
export function recordedToken(issued: {
  resource: string;
  principal?: { tenantId: string; clientId: string; kind: "application" | "managedIdentity" };
  clientId?: string;
}): RecordedToken {
  if (issued.principal === undefined) {
    return { audience: issued.resource, kind: "managedIdentityEndpoint", ...(issued.clientId === undefined ? {} : { clientId: issued.clientId }) };
  }
  return { audience: issued.resource, tenantId: issued.principal.tenantId, clientId: issued.principal.clientId, kind: issued.principal.kind };
}

/**
 * @param request - The request's URL as received (path and query).
 * @returns The path and the query (without `?`).
 */
export function splitRequestUrl(requestUrl: string | undefined): { path: string; query: string } {
  const url = requestUrl ?? "/";
  const index = url.indexOf("?");
  return index < 0 ? { path: url, query: "" } : { path: url.slice(0, index), query: url.slice(index + 1) };
}

/**
 * What every recorded request carries: its target, time, method, path, query, content type,
 * the answer's status and its error code.
 */
export function recordedExchange(
  target: RecordedTarget,
  request: { readonly method?: string; readonly url?: string; readonly headers: { readonly "content-type"?: string } },
  status: number,
  errorCode: unknown,
): RecordedRequest {
  return {
    target,
    at: new Date().toISOString(),
    method: request.method ?? "GET",
    ...splitRequestUrl(request.url),
    ...(request.headers["content-type"] === undefined ? {} : { contentType: request.headers["content-type"] }),
    status,
    ...(typeof errorCode === "string" ? { errorCode } : {}),
  };
}
