/**
 * A managed-identity token endpoint (App Service protocol) for the Entra ID path of the azblob
 * backend. The Pulumi CLI and the provider host share one environment, hence one
 * IDENTITY_ENDPOINT: tokens for Azure Storage are minted here, in the form Azurite's
 * `--oauth basic` checks (an unsigned JWT with issuer, audience and lifetime); every other
 * resource (ARM, Cosmos DB) is forwarded to the sandbox's own token endpoint unchanged.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** The audience Azure Storage tokens carry (the scope `https://storage.azure.com/.default`). */
const storageResource = "https://storage.azure.com";

/** A running issuer. */
export interface StorageTokenIssuer {
  /** The value for IDENTITY_ENDPOINT. */
  readonly endpoint: string;
  /** How many storage tokens were issued: proof that a client took the Entra ID path. */
  storageTokensIssued(): number;
  stop(): Promise<void>;
}

function base64UrlJson(value: unknown): string {
  return Buffer.from(JSON.stringify(value), "utf8").toString("base64url");
}

function storageToken(lifetimeInSeconds: number): { token: string; expiresOn: number } {
  const now = Math.floor(Date.now() / 1000);
  const expiresOn = now + lifetimeInSeconds;
  const claims = {
    aud: storageResource,
    iss: "https://sts.windows.net/00000000-0000-0000-0000-000000000000/",
    iat: now,
    nbf: now - 60,
    exp: expiresOn,
    oid: "00000000-0000-0000-0000-00000000a2b1",
  };
  return { token: `${base64UrlJson({ alg: "none", typ: "JWT" })}.${base64UrlJson(claims)}.`, expiresOn };
}

/** Starts the issuer on 127.0.0.1; `sandboxIdentityEndpoint` and `identityHeader` are the sandbox's. */
export async function startStorageTokenIssuer(sandboxIdentityEndpoint: string, identityHeader: string): Promise<StorageTokenIssuer> {
  let issued = 0;
  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const url = new URL(request.url ?? "/", "http://127.0.0.1");
    const resource = (url.searchParams.get("resource") ?? "").replace(/\/+$/, "");
    if (resource !== storageResource) {
      const forwarded = new URL(sandboxIdentityEndpoint);
      forwarded.search = url.search;
      const answer = await fetch(forwarded, { headers: { "x-identity-header": String(request.headers["x-identity-header"] ?? "") } });
      response.writeHead(answer.status, { "content-type": answer.headers.get("content-type") ?? "application/json" });
      response.end(await answer.text());
      return;
    }
    if (request.headers["x-identity-header"] !== identityHeader) {
      response.writeHead(401, { "content-type": "application/json" });
      response.end(JSON.stringify({ error: "invalid_request", error_description: "x-identity-header does not match IDENTITY_HEADER" }));
      return;
    }
    issued += 1;
    const { token, expiresOn } = storageToken(3600);
    response.writeHead(200, { "content-type": "application/json" });
    response.end(JSON.stringify({ access_token: token, expires_on: String(expiresOn), resource: storageResource, token_type: "Bearer" }));
  };
  const server: Server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      response.writeHead(502, { "content-type": "application/json" });
      response.end(JSON.stringify({ error: "bad_gateway", error_description: error instanceof Error ? error.message : String(error) }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}/msi/token`,
    storageTokensIssued: () => issued,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
