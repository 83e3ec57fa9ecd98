import { describe, expect, it } from "vitest";
import {
  CosmosDocumentError,
  UserAssignedIdentityReadError,
  classifyLookupError,
  completeError,
  cosmosStatusCode,
  describeCosmosError,
  isCosmosDocumentError,
  isUserAssignedIdentityReadError,
} from "../../../resources/core/errors";
import { SettingsError } from "../../../resources/core/settings";
import { cosmosError } from "../../fakes/inMemoryDocumentStore";
import { restError } from "../../fakes/scriptedUserAssignedIdentityReader";

describe("classifyLookupError", () => {
  it.each([
    ["ARM ResourceNotFound", restError("ResourceNotFound", 404, "The Resource was not found."), true, { code: "ResourceNotFound", statusCode: 404, message: "The Resource was not found." }],
    ["a 404 with another code", restError("ResourceGroupNotFound", 404, "Resource group 'x' could not be found."), true, { code: "ResourceGroupNotFound", statusCode: 404, message: "Resource group 'x' could not be found." }],
    ["ResourceNotFound without a status", restError("ResourceNotFound", undefined, "gone"), true, { code: "ResourceNotFound", message: "gone" }],
    ["a 403", restError("AuthorizationFailed", 403, "no access\nmore"), false, { code: "AuthorizationFailed", statusCode: 403, message: "no access" }],
    ["a 429 without a code", restError(undefined, 429, "Too Many Requests"), false, { code: "HTTP429", statusCode: 429, message: "Too Many Requests" }],
    ["a connection failure", restError("REQUEST_SEND_ERROR", undefined, "connect ECONNREFUSED 127.0.0.1:1"), false, { code: "ConnectionFailed", message: "connect ECONNREFUSED 127.0.0.1:1" }],
    ["an AbortError", Object.assign(new Error("The operation was aborted."), { name: "AbortError" }), false, { code: "Timeout", message: "the lookup did not complete within the configured lookup timeout" }],
    ["a timeout signal's reason", new DOMException("signal timed out", "TimeoutError"), false, { code: "Timeout", message: "the lookup did not complete within the configured lookup timeout" }],
    ["a credential failure", Object.assign(new Error("ManagedIdentityCredential: unavailable"), { name: "CredentialUnavailableError" }), false, { code: "CredentialUnavailable", message: "ManagedIdentityCredential: unavailable" }],
    ["a plain Error", new Error("boom"), false, { code: "Error", message: "boom" }],
    ["a TypeError", new TypeError("x is not a function"), false, { code: "TypeError", message: "x is not a function" }],
    ["a thrown string", "just a string", false, { code: "Error", message: "just a string" }],
  ])("classifies %s", (_title, error, notFound, details) => {
    expect(classifyLookupError(error)).toEqual({ notFound, details });
  });

  it("redacts a token in the message", () => {
    expect(classifyLookupError(restError("Unauthorized", 401, "Bearer abcdefghijklmnopqrstuvwxyz rejected")).details.message).toBe("Bearer [redacted] rejected");
  });
});

describe("cosmosStatusCode and describeCosmosError", () => {
  it.each([
    [cosmosError(412), 412],
    [{ statusCode: 503 }, 503],
    [new Error("x"), undefined],
    ["text", undefined],
  ])("reads the status of %j", (error, expected) => {
    expect(cosmosStatusCode(error)).toBe(expected);
  });

  it("describes a Cosmos error by body code, status and first sentence, without activity details", () => {
    expect(describeCosmosError(cosmosError(412, "One of the specified pre-condition is not met."))).toBe("PreconditionFailed (HTTP 412): One of the specified pre-condition is not met.");
  });

  it("falls back to the message and a generic code", () => {
    expect(describeCosmosError(Object.assign(new Error("Message: socket hang up"), { code: 503 }))).toBe("CosmosError (HTTP 503): socket hang up");
  });
});

describe("error classes", () => {
  it("builds a UserAssignedIdentityReadError whose message names each identity, code and status", () => {
    const error = new UserAssignedIdentityReadError({
      documentId: "doc-1",
      persisted: true,
      failures: [
        { resourceId: "/a", error: { code: "AuthorizationFailed", statusCode: 403, message: "no" } },
        { resourceId: "/b", error: { code: "Timeout", message: "slow" } },
      ],
    });
    expect(error.message).toBe(
      "failed to read 2 data plane operator managed identities for ServiceProviderCluster document doc-1 (the other identities were persisted; the failed entries were cleared and carry a retrievalError):\n" +
        "  - /a: AuthorizationFailed (HTTP 403): no\n  - /b: Timeout: slow",
    );
    expect(error.name).toBe("UserAssignedIdentityReadError");
    expect(isUserAssignedIdentityReadError(error)).toBe(true);
    expect(isCosmosDocumentError(error)).toBe(false);
  });

  it("uses the singular for one identity and says when nothing was written", () => {
    const error = new UserAssignedIdentityReadError({ documentId: "d", persisted: false, failures: [{ resourceId: "/a", error: { code: "X", message: "y" } }] });
    expect(error.message).toContain("failed to read 1 data plane operator managed identity for ServiceProviderCluster document d (nothing was written)");
  });

  it("keeps the record id, status and cause of a CosmosDocumentError", () => {
    const cause = cosmosError(412);
    const error = new CosmosDocumentError({ documentId: "doc-1", statusCode: 412, message: "failed", cause });
    expect(error).toMatchObject({ name: "CosmosDocumentError", message: "failed", documentId: "doc-1", statusCode: 412, cause });
    expect(isCosmosDocumentError(error)).toBe(true);
    expect(Object.keys(error)).not.toContain("name");
  });

  it.each([
    ["a plain object with the name", { name: "CosmosDocumentError", message: "x" }],
    ["an Error with another name", new Error("x")],
    ["undefined", undefined],
  ])("the guards refuse %s", (_title, value) => {
    expect(isCosmosDocumentError(value)).toBe(false);
    expect(isUserAssignedIdentityReadError(value)).toBe(false);
  });

  it("names a SettingsError", () => {
    const error = new SettingsError("bad");
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe("SettingsError");
    expect(error.message).toBe("bad");
  });
});

describe("completeError", () => {
  it("repairs an instance built the way the closure serializer rewrites a subclass constructor", () => {
    // The serializer's output for `class X extends Error { constructor(m) { super(m); completeError(...) } }`.
    function RewrittenError(this: Error, message: string): void {
      Error.call(this, message);
      completeError(this, "RewrittenError", message, "the cause");
    }
    Object.setPrototypeOf(RewrittenError, Error);
    const error = new (RewrittenError as unknown as new (message: string) => Error)("it broke");
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe("RewrittenError");
    expect(error.message).toBe("it broke");
    expect(error.cause).toBe("the cause");
    expect(typeof error.stack).toBe("string");
    expect(String(error)).toBe("RewrittenError: it broke");
  });
});
