/**
 * Azurite (the Azure Storage emulator, npm `azurite`) for tests: its Blob service on 127.0.0.1 at
 * an OS-assigned port, data in a private directory, stopped by the test. Plus a small Blob
 * client signed with the account's shared key (the Storage REST API's `SharedKey` scheme), so
 * tests read back what the Pulumi backend wrote without another SDK in the dependencies.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createHmac } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
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

/** A running Azurite Blob service. */
export interface Azurite {
  /** `127.0.0.1:<port>`, the `domain=` of an `azblob://` URL. */
  readonly host: string;
  /** Creates a container (the DIY backend writes into an existing container only). */
  createContainer(container: string): Promise<void>;
  /** Names of the blobs in a container, optionally under a prefix, sorted. */
  listBlobs(container: string, prefix?: string): Promise<string[]>;
  /** Stops the emulator and deletes its data directory. Safe to call twice. */
  stop(): Promise<void>;
}

/** Starts Azurite's Blob service only (no queue or table service), loopback only, no telemetry. */
export async function startAzurite(): Promise<Azurite> {
  const dataDirectory = mkdtempSync(join(tmpdir(), "azurite-"));
  const azuriteBlobMain = require.resolve("azurite/dist/src/blob/main.js");
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
    const request = (method: string, path: string, query: Record<string, string>): Promise<Response> =>
      signedRequest(host, method, path, query);
    return {
      host,
      async createContainer(container) {
        const response = await request("PUT", `/${container}`, { restype: "container" });
        if (response.status !== 201) {
          throw new Error(`Azurite: creating container ${container} answered ${response.status}: ${await response.text()}`);
        }
      },
      async listBlobs(container, prefix) {
        const query: Record<string, string> = { restype: "container", comp: "list", ...(prefix === undefined ? {} : { prefix }) };
        const response = await request("GET", `/${container}`, query);
        const body = await response.text();
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

/**
 * One Blob REST call with `Authorization: SharedKey`. The string to sign is the verb, eleven
 * standard headers (all empty here: no body, no conditions), the x-ms-* headers and the
 * canonical resource. Against the emulator the URL path starts with the account name, and the
 * canonical resource prefixes the account once more.
 */
async function signedRequest(host: string, method: string, path: string, query: Record<string, string>): Promise<Response> {
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
  const url = new URL(`http://${host}${urlPath}`);
  for (const [name, value] of Object.entries(query)) {
    url.searchParams.set(name, value);
  }
  return fetch(url, { method, headers: { ...headers, authorization: `SharedKey ${azuriteAccountName}:${signature}` } });
}

function unescapeXml(text: string): string {
  return text.replace(/&(lt|gt|quot|apos|amp);/g, (_, entity: string) => ({ lt: "<", gt: ">", quot: '"', apos: "'", amp: "&" })[entity] ?? "");
}
