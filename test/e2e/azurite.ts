/**
 * Azurite (the Azure Storage emulator, npm `azurite`) for tests: its Blob service on 127.0.0.1 at
 * an OS-assigned port, data in a private directory, stopped by the test. Plus a small Blob
 * client signed with the account's shared key (the Storage REST API's `SharedKey` scheme), so
 * tests read back what the Pulumi backend wrote without another SDK in the dependencies.
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
