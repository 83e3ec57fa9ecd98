/**
 * The store seam (resources/cosmos/documentStore.ts over a scripted @azure/cosmos Container): only
 * a 404 for a missing document reads as absent. A 404 with substatus 1003 (the database or
 * container does not exist), a 403 with substatus 1008 (the account does not exist) and an
 * account host that does not resolve are configuration errors naming the settings and the values
 * in use, on point reads, on batched and bulk reads (which fall back to point reads) and on
 * patches; readLive and waitForDocument (resources/sync/documents.ts) fail at once with them.
 */
import type { Container } from "@azure/cosmos";
import { describe, expect, it } from "vitest";
import { isCosmosConfigurationError, isCosmosDocumentError } from "../../../resources/core/errors";
import { cosmosStatusCode } from "../../../resources/core/errorClassification";
import type { JsonObject } from "../../../resources/core/json";
import { createDocumentStore } from "../../../resources/cosmos/documentStore";
import type { DocumentStore } from "../../../resources/cosmos/documentStore";
import { readLive, waitForDocument } from "../../../resources/sync/documents";
import type { DocumentDependencies } from "../../../resources/sync/documents";
import { cosmosError } from "../../fakes/inMemoryDocumentStore";

const endpoint = "https://aro-hcp-test.documents.azure.com";

/** What the scripted container answers a point read: a response, or an error it throws. */
type PointAnswer = { statusCode: number; substatus?: number; resource?: JsonObject; etag?: string } | { throws: Error };

interface Script {
  /** By document id; a document not listed answers 404 without substatus. */
  readonly point?: Record<string, PointAnswer>;
  /** The batch or bulk request throws this, or answers these results in order. */
  readonly together?: { throws: Error } | Array<{ statusCode: number; subStatusCode?: number; resourceBody?: JsonObject; eTag?: string }>;
  readonly patch?: { throws: Error };
}

interface ScriptedContainer {
  readonly container: Container;
  readonly calls: string[];
}

/** A Container with the few members the store uses, answering from the script and recording each call. */
function scriptedContainer(script: Script, database = "aro-hcp", container = "Resources"): ScriptedContainer {
  const calls: string[] = [];
  const together = (kind: string): Promise<unknown> => {
    calls.push(kind);
    const answer = script.together ?? { throws: new Error(`${kind} request error`) };
    return "throws" in answer ? Promise.reject(answer.throws) : Promise.resolve(answer);
  };
  const fake = {
    id: container,
    database: { id: database },
    item: (id: string) => ({
      read: () => {
        calls.push(`read ${id}`);
        const answer = script.point?.[id] ?? { statusCode: 404 };
        return "throws" in answer ? Promise.reject(answer.throws) : Promise.resolve(answer);
      },
      patch: () => {
        calls.push(`patch ${id}`);
        return script.patch === undefined ? Promise.resolve({ statusCode: 200, resource: { id }, etag: '"patched"' }) : Promise.reject(script.patch.throws);
      },
    }),
    items: {
      batch: async () => ({ result: await together("batch") }),
      bulk: async () => together("bulk"),
    },
  };
  return { container: fake as unknown as Container, calls };
}

/** A Cosmos ErrorResponse-shaped error with a substatus, as @azure/cosmos throws it. */
function cosmosErrorWithSubstatus(code: number, substatus: number): Error {
  return Object.assign(cosmosError(code), { substatus });
}

/** The RestError @azure/cosmos throws when the account's host name does not resolve. */
function hostNotFound(): Error {
  return Object.assign(new Error("getaddrinfo ENOTFOUND aro-hcp-test.documents.azure.com"), { name: "RestError", code: "ENOTFOUND" });
}

async function rejection(promise: Promise<unknown>): Promise<Error> {
  return promise.then(
    () => {
      throw new Error("expected a rejection");
    },
    (error: unknown) => error as Error,
  );
}

function expectNamesSettings(error: Error, database = "aro-hcp", container = "Resources"): void {
  expect(isCosmosConfigurationError(error), error.message).toBe(true);
  expect(error.message).toContain(`'aro-hcp-identity-status:cosmosEndpoint' (now ${endpoint})`);
  expect(error.message).toContain(`'aro-hcp-identity-status:cosmosDatabase' (now '${database}')`);
  expect(error.message).toContain(`'aro-hcp-identity-status:cosmosContainer' (now '${container}')`);
  expect(error.message).toContain("nothing was written");
}

const missingOwner = { statusCode: 404, substatus: 1003 };

describe("point reads", () => {
  it("answer undefined only for a 404 with a missing document's substatus (none, or 0)", async () => {
    const { container } = scriptedContainer({ point: { plain: { statusCode: 404 }, zero: { statusCode: 404, substatus: 0 } } });
    const store = createDocumentStore(container, { endpoint });
    expect(await store.readDocument("partition", "plain")).toBeUndefined();
    expect(await store.readDocument("partition", "zero")).toBeUndefined();
  });

  it("fail with a configuration error naming the settings for a 404 with substatus 1003", async () => {
    const { container } = scriptedContainer({ point: { spc: missingOwner } }, "aro-hcp-typo", "Resources");
    const error = await rejection(createDocumentStore(container, { endpoint }).readDocument("partition", "spc"));
    expectNamesSettings(error, "aro-hcp-typo");
    expect(error.message).toMatch(
      /^the Cosmos DB database 'aro-hcp-typo' or its container 'Resources' does not exist \(NotFound, HTTP 404, substatus 1003.*\[read of document spc\]$/s,
    );
    expect(cosmosStatusCode(error)).toBe(404);
  });

  it("fail with a configuration error for an account that does not exist: 403 with substatus 1008, or a host that does not resolve", async () => {
    const { container } = scriptedContainer({ point: { forbidden: { throws: cosmosErrorWithSubstatus(403, 1008) }, unresolved: { throws: hostNotFound() } } });
    const store = createDocumentStore(container, { endpoint });
    const forbidden = await rejection(store.readDocument("partition", "forbidden"));
    expectNamesSettings(forbidden);
    expect(forbidden.message).toContain(`the Cosmos DB account ${endpoint} does not exist (Forbidden, HTTP 403, substatus 1008)`);
    const unresolved = await rejection(store.readDocument("partition", "unresolved"));
    expectNamesSettings(unresolved);
    expect(unresolved.message).toMatch(/^the host name of the Cosmos DB account .* does not resolve \(ENOTFOUND\)/);
  });

  it("fail, without naming the settings, for a 404 with another substatus and for an answer without a document", async () => {
    const { container } = scriptedContainer({ point: { session: { statusCode: 404, substatus: 1002 }, empty: { statusCode: 200 } } });
    const store = createDocumentStore(container, { endpoint });
    for (const id of ["session", "empty"]) {
      const error = await rejection(store.readDocument("partition", id));
      expect(isCosmosConfigurationError(error)).toBe(false);
    }
  });

  it("pass other SDK errors through unchanged", async () => {
    const throttled = cosmosError(429);
    const { container } = scriptedContainer({ point: { spc: { throws: throttled } } });
    expect(await rejection(createDocumentStore(container, { endpoint }).readDocument("partition", "spc"))).toBe(throttled);
  });

  it("name the settings without an endpoint when the store was given none", async () => {
    const { container } = scriptedContainer({ point: { spc: missingOwner } });
    const error = await rejection(createDocumentStore(container).readDocument("partition", "spc"));
    expect(isCosmosConfigurationError(error)).toBe(true);
    expect(error.message).toContain("'aro-hcp-identity-status:cosmosEndpoint', 'aro-hcp-identity-status:cosmosDatabase' (now 'aro-hcp')");
  });
});

describe("reads that go together", () => {
  const document = (id: string): JsonObject => ({ id, _etag: `"${id}"` });

  it.each(["batch", "bulk"])("fall back to point reads when the %s request fails, and each names the settings", async (kind) => {
    const partitionKeys = kind === "batch" ? ["partition", "partition"] : ["partition-1", "partition-2"];
    const { container, calls } = scriptedContainer({ point: { first: missingOwner, second: missingOwner } });
    const store = createDocumentStore(container, { endpoint });
    const outcomes = await Promise.allSettled([store.readDocument(partitionKeys[0], "first"), store.readDocument(partitionKeys[1], "second")]);
    expect(calls).toEqual([kind, "read first", "read second"]);
    for (const outcome of outcomes) {
      expect(outcome.status).toBe("rejected");
      expectNamesSettings((outcome as PromiseRejectedResult).reason as Error);
    }
  });

  it("answer an operation's plain 404 as absent, and send one with another substatus to a point read", async () => {
    const { container, calls } = scriptedContainer({
      together: [{ statusCode: 200, resourceBody: document("found"), eTag: '"found"' }, { statusCode: 404 }, { statusCode: 404, subStatusCode: 1002 }],
      point: { session: { statusCode: 200, resource: document("session"), etag: '"session"' } },
    });
    const store = createDocumentStore(container, { endpoint });
    const [found, missing, session] = await Promise.all(["found", "missing", "session"].map((id) => store.readDocument("partition", id)));
    expect(found?.document.id).toBe("found");
    expect(missing).toBeUndefined();
    expect(session?.document.id).toBe("session");
    expect(calls).toEqual(["batch", "read session"]);
  });
});

describe("patches", () => {
  it("fail with a configuration error for a 404 with substatus 1003, and keep a plain 404 (a deleted document) as the SDK's error", async () => {
    const owner = scriptedContainer({ patch: { throws: cosmosErrorWithSubstatus(404, 1003) } });
    const error = await rejection(createDocumentStore(owner.container, { endpoint }).patchDocument("partition", "spc", [], '"etag"'));
    expectNamesSettings(error);
    expect(error.message).toMatch(/^the Cosmos DB database .* \(NotFound, HTTP 404, .*\[write of document spc\]$/s);
    const gone = cosmosError(404);
    const deleted = scriptedContainer({ patch: { throws: gone } });
    expect(await rejection(createDocumentStore(deleted.container, { endpoint }).patchDocument("partition", "spc", [], '"etag"'))).toBe(gone);
  });
});

describe("readLive and waitForDocument over the store", () => {
  function dependencies(store: DocumentStore, sleeps: number[]): DocumentDependencies {
    return {
      documentStore: store,
      now: () => new Date("2026-08-14T12:00:00Z"),
      random: () => 0.5,
      sleep: (durationInMs) => {
        sleeps.push(durationInMs);
        return Promise.resolve();
      },
      options: { lookupTimeoutInMs: 30_000, documentWaitInMs: 60_000, documentPollIntervalInMs: 1000, maxWriteAttempts: 5 },
    } as DocumentDependencies;
  }

  it("fail at once with the settings named: no wait for a document in a container that does not exist", async () => {
    const { container, calls } = scriptedContainer({ point: { spc: missingOwner } }, "aro-hcp", "Resourcez");
    const sleeps: number[] = [];
    const description = "ServiceProviderCluster document spc (/subscriptions/…)";
    const error = await rejection(waitForDocument(dependencies(createDocumentStore(container, { endpoint }), sleeps), "partition", "spc", description));
    expect(isCosmosDocumentError(error)).toBe(true);
    expectNamesSettings(error, "aro-hcp", "Resourcez");
    expect(error.message).toMatch(
      new RegExp(
        `^the Cosmos DB database 'aro-hcp' or its container 'Resourcez' does not exist \\(NotFound, HTTP 404.*\\[reading ServiceProviderCluster document spc \\(/subscriptions/…\\)\\]$`,
        "s",
      ),
    );
    expect(sleeps).toEqual([]);
    expect(calls).toEqual(["read spc"]);
  });

  it("still read a missing document in an existing container as absent", async () => {
    const { container } = scriptedContainer({});
    expect(
      await readLive(dependencies(createDocumentStore(container, { endpoint }), []), "partition", "spc", "ServiceProviderCluster document spc"),
    ).toBeUndefined();
  });
});
