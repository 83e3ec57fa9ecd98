/**
 * Azurite (the Azure Storage emulator, npm `azurite`) for the tests and the benchmark: its Blob
 * service on 127.0.0.1 at an OS-assigned port, data in a private directory, stopped by its user.
 * Plus a small Blob client signed with the account's shared key (the Storage REST API's `SharedKey`
 * scheme), so tests read back what the Pulumi backend wrote without another SDK in the
 * dependencies, and a container described as a Pulumi `azblob://` backend.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createHmac } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * Azurite's built-in development account. Its key is published in Azurite's README and works only
 * against an emulator, so it is not a secret; tests still never print it.
 */
export const azuriteAccountName = "devstoreaccount1";
export const azuriteAccountKey = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

/** The REST API version the helper speaks; Azurite 3.35 serves it. */
const storageApiVersion = "2021-08-06";

/** Options of {@link startAzurite}. */
export interface AzuriteOptions {
  /** Serve HTTPS with this certificate (PEM, for 127.0.0.1) instead of plain HTTP. */
  readonly tls?: { readonly certificatePem: string; readonly privateKeyPem: string };
  /**
   * Also accept Entra ID bearer tokens (Azurite's `--oauth basic`, HTTPS only): it checks a
   * token's form, lifetime, issuer and audience, not its signature. Shared key keeps working.
   */
  readonly oauth?: boolean;
}

/** A running Azurite Blob service. */
export interface Azurite {
  /** The emulator's process (the benchmark counts its CPU). */
  readonly pid: number;
  /** `127.0.0.1:<port>`, the `domain=` of an `azblob://` URL. */
  readonly host: string;
  /** With TLS: the certificate file to trust (e.g. Go's `SSL_CERT_FILE` for the Pulumi CLI). */
  readonly certificateFile?: string;
  /** Creates a container (the DIY backend writes into an existing container only). */
  createContainer(container: string): Promise<void>;
  /** Names of the blobs in a container, optionally under a prefix, sorted. */
  listBlobs(container: string, prefix?: string): Promise<string[]>;
  /** Stops the emulator and deletes its data directory. Safe to call twice. */
  stop(): Promise<void>;
}

/** Starts Azurite's Blob service only (no queue or table service), loopback only, no telemetry. */
export async function startAzurite(options: AzuriteOptions = {}): Promise<Azurite> {
  const dataDirectory = mkdtempSync(join(tmpdir(), "azurite-"));
  const azuriteBlobMain = require.resolve("azurite/dist/src/blob/main.js");
  const tlsArguments: string[] = [];
  let certificateFile: string | undefined;
  if (options.tls !== undefined) {
    certificateFile = join(dataDirectory, "certificate.pem");
    const keyFile = join(dataDirectory, "key.pem");
    writeFileSync(certificateFile, options.tls.certificatePem);
    writeFileSync(keyFile, options.tls.privateKeyPem, { mode: 0o600 });
    tlsArguments.push("--cert", certificateFile, "--key", keyFile, ...(options.oauth === true ? ["--oauth", "basic"] : []));
  } else if (options.oauth === true) {
    throw new Error("Azurite accepts OAuth over HTTPS only: give a certificate");
  }
  const child = spawn(
    process.execPath,
    [
      azuriteBlobMain,
      "--blobHost",
      "127.0.0.1",
      "--blobPort",
      "0",
      "--location",
      dataDirectory,
      "--disableTelemetry",
      "--silent",
      // The Go SDK in the Pulumi CLI sends a newer x-ms-version than Azurite 3.35 knows; the
      // operations the backend uses (get/put/list/delete blob) are unchanged between them.
      "--skipApiVersionCheck",
      ...tlsArguments,
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  // Should the test process end without its teardown, the emulator must not outlive it.
  const killOnExit = (): void => {
    child.kill("SIGKILL");
  };
  process.once("exit", killOnExit);
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) {
      return;
    }
    stopped = true;
    process.off("exit", killOnExit);
    await stopChild(child);
    rmSync(dataDirectory, { recursive: true, force: true });
  };
  try {
    const port = await listeningPort(child);
    const host = `127.0.0.1:${port}`;
    const request = (method: string, path: string, query: Record<string, string>): Promise<BlobResponse> =>
      signedRequest({ host, certificatePem: options.tls?.certificatePem }, method, path, query);
    return {
      pid: child.pid ?? 0,
      host,
      certificateFile,
      async createContainer(container) {
        const response = await request("PUT", `/${container}`, { restype: "container" });
        if (response.status !== 201) {
          throw new Error(`Azurite: creating container ${container} answered ${response.status}: ${response.body}`);
        }
      },
      async listBlobs(container, prefix) {
        const query: Record<string, string> = { restype: "container", comp: "list", ...(prefix === undefined ? {} : { prefix }) };
        const response = await request("GET", `/${container}`, query);
        const body = response.body;
        if (response.status !== 200) {
          throw new Error(`Azurite: listing container ${container} answered ${response.status}: ${body}`);
        }
        // Each blob is <Blob><Name>…</Name>…</Blob>; names are XML-escaped.
        return [...body.matchAll(/<Blob><Name>([^<]*)<\/Name>/g)].map((match) => unescapeXml(match[1] ?? "")).sort();
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

function listeningPort(child: ChildProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    let output = "";
    const onData = (chunk: Buffer): void => {
      output += chunk.toString("utf8");
      const match = /listens on https?:\/\/127\.0\.0\.1:(\d+)/.exec(output);
      if (match?.[1] !== undefined) {
        child.stdout?.off("data", onData);
        resolve(Number(match[1]));
      }
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    child.once("exit", (code) => reject(new Error(`Azurite exited with code ${String(code)} before listening:\n${output}`)));
    child.once("error", reject);
  });
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve();
  }
  return new Promise((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
  });
}

interface BlobResponse {
  readonly status: number;
  readonly body: string;
}

/**
 * One Blob REST call with `Authorization: SharedKey`. The string to sign is the verb, eleven
 * standard headers (all empty here: no body, no conditions), the x-ms-* headers and the
 * canonical resource. Against the emulator the URL path starts with the account name, and the
 * canonical resource prefixes the account once more.
 */
async function signedRequest(
  target: { readonly host: string; readonly certificatePem?: string },
  method: string,
  path: string,
  query: Record<string, string>,
): Promise<BlobResponse> {
  const headers: Record<string, string> = { "x-ms-date": new Date().toUTCString(), "x-ms-version": storageApiVersion };
  const urlPath = `/${azuriteAccountName}${path}`;
  const canonicalHeaders = Object.keys(headers)
    .sort()
    .map((name) => `${name}:${headers[name] ?? ""}\n`)
    .join("");
  const canonicalQuery = Object.keys(query)
    .map((name) => name.toLowerCase())
    .sort()
    .map((name) => `\n${name}:${query[name] ?? ""}`)
    .join("");
  const stringToSign = `${method}\n${"\n".repeat(11)}${canonicalHeaders}/${azuriteAccountName}${urlPath}${canonicalQuery}`;
  const signature = createHmac("sha256", Buffer.from(azuriteAccountKey, "base64")).update(stringToSign, "utf8").digest("base64");
  const secure = target.certificatePem !== undefined;
  const url = new URL(`${secure ? "https" : "http"}://${target.host}${urlPath}`);
  for (const [name, value] of Object.entries(query)) {
    url.searchParams.set(name, value);
  }
  const requestHeaders = { ...headers, authorization: `SharedKey ${azuriteAccountName}:${signature}`, "content-length": "0" };
  return new Promise((resolve, reject) => {
    const onResponse = (response: IncomingMessage): void => {
      let body = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => (body += chunk));
      response.on("end", () => resolve({ status: response.statusCode ?? 0, body }));
      response.on("error", reject);
    };
    // The emulator's certificate is trusted for this request only, never process-wide.
    const outgoing = secure
      ? httpsRequest(url, { method, headers: requestHeaders, ca: target.certificatePem }, onResponse)
      : httpRequest(url, { method, headers: requestHeaders }, onResponse);
    outgoing.on("error", reject);
    outgoing.end();
  });
}

function unescapeXml(text: string): string {
  return text.replace(/&(lt|gt|quot|apos|amp);/g, (_, entity: string) => ({ lt: "<", gt: ">", quot: '"', apos: "'", amp: "&" })[entity] ?? "");
}

/** One Azure Blob container used as the Pulumi backend of many runners. */
export interface AzblobBackend {
  readonly azurite: Azurite;
  readonly container: string;
  /**
   * The backend URL. gocloud.dev's azblob opener takes the account from AZURE_STORAGE_ACCOUNT and
   * builds `https://<account>.blob.core.windows.net` unless told otherwise: `domain=127.0.0.1:<port>`
   * makes it address the emulator path-style (`<protocol>://127.0.0.1:<port>/<account>`), and
   * `protocol=http` matches Azurite's plain-HTTP listener when it has no certificate.
   */
  readonly url: string;
  /** What every runner adds to its environment to reach the container (account, credential, trust). */
  readonly environment: Readonly<Record<string, string>>;
  /** Blob names under the backend's `.pulumi/` bookkeeping, e.g. `.pulumi/stacks/<project>/<stack>.json`. */
  blobs(prefix?: string): Promise<string[]>;
}

/** How runners authenticate to the container. */
export type AzblobCredential =
  | { readonly kind: "accountKey" }
  /** Entra ID: no key; the CLI's DefaultAzureCredential gets a token from this managed-identity endpoint. */
  | { readonly kind: "entraId"; readonly identityEndpoint: string };

/** Creates the container and describes the backend in it. */
export async function createAzblobBackend(azurite: Azurite, container: string, credential: AzblobCredential = { kind: "accountKey" }): Promise<AzblobBackend> {
  await azurite.createContainer(container);
  const environment: Record<string, string> = { AZURE_STORAGE_ACCOUNT: azuriteAccountName };
  if (credential.kind === "accountKey") {
    environment.AZURE_STORAGE_KEY = azuriteAccountKey;
  } else {
    environment.IDENTITY_ENDPOINT = credential.identityEndpoint;
    // The driver takes a non-empty key, SAS or connection string before Entra ID; blank any the
    // test process might have inherited, so this runner can only use a token.
    for (const name of ["AZURE_STORAGE_KEY", "AZURE_STORAGE_SAS_TOKEN", "AZURE_STORAGE_CONNECTION_STRING", "AZURE_STORAGEBLOB_CONNECTIONSTRING"]) {
      environment[name] = "";
    }
  }
  if (azurite.certificateFile !== undefined) {
    // Go reads SSL_CERT_FILE as its trust store: the CLI trusts the emulator's certificate, and
    // only the emulator's (the engine makes no other HTTPS call offline). Node ignores it.
    environment.SSL_CERT_FILE = azurite.certificateFile;
  }
  return {
    azurite,
    container,
    url: `azblob://${container}?domain=${azurite.host}${azurite.certificateFile === undefined ? "&protocol=http" : ""}`,
    environment,
    blobs: (prefix = ".pulumi/") => azurite.listBlobs(container, prefix),
  };
}
