import { nothingWritten, withMsiWritten } from "../../../resources/core/clusterMessage";
import { describe, expect, it } from "vitest";
import { AzureAccessError, CosmosDocumentError, UserAssignedIdentityReadError, isCosmosDocumentError } from "../../../resources/core/errors";
import {
  azureErrorCode,
  classifyLookupError,
  cosmosStatusCode,
  describeCosmosError,
  isUnansweredCosmosRequest,
} from "../../../resources/core/errorClassification";
import { SettingsError } from "../../../resources/core/settings";
import { cosmosError } from "../../fakes/inMemoryDocumentStore";
import { restError } from "../../fakes/scriptedUserAssignedIdentityReader";

/** A RestError as @azure/core-client throws it for an answer: its own `code` from the body, and the response. */
function armAnswer(statusCode: number, bodyAsText: string, headers: Record<string, string> = {}): Error {
  let code: unknown;
  try {
    code = (JSON.parse(bodyAsText) as { error?: { code?: unknown } }).error?.code;
  } catch {
    code = undefined;
  }
  return Object.assign(new Error(bodyAsText), {
    name: "RestError",
    code,
    statusCode,
    response: { status: statusCode, bodyAsText, headers: { get: (name: string) => headers[name.toLowerCase()] } },
  });
}

const named = (name: string, message: string): Error => Object.assign(new Error(message), { name });
const nodeError = (code: string, message: string): Error => Object.assign(new Error(message), { code });

describe("classifyLookupError", () => {
  // The line between "about this identity" and "global" (docs/design.md, "Global failures").
  it.each([
    [
      "ARM ResourceNotFound",
      restError("ResourceNotFound", 404, "The Resource was not found."),
      "notFound",
      { code: "ResourceNotFound", statusCode: 404, message: "The Resource was not found." },
    ],
    [
      "a 404 with another code",
      restError("ResourceGroupNotFound", 404, "Resource group 'x' could not be found."),
      "identity",
      { code: "ResourceGroupNotFound", statusCode: 404, message: "Resource group 'x' could not be found." },
    ],
    ["ResourceNotFound without a status", restError("ResourceNotFound", undefined, "gone"), "notFound", { code: "ResourceNotFound", message: "gone" }],
    [
      "a 403 on the identity",
      restError("AuthorizationFailed", 403, "no access\nmore"),
      "identity",
      { code: "AuthorizationFailed", statusCode: 403, message: "no access" },
    ],
    ["a 429 without a code", restError(undefined, 429, "Too Many Requests"), "identity", { code: "HTTP429", statusCode: 429, message: "Too Many Requests" }],
    ["a 500", restError("InternalServerError", 500, "oops"), "identity", { code: "InternalServerError", statusCode: 500, message: "oops" }],
    ["a 503", restError("ServiceUnavailable", 503, "busy"), "identity", { code: "ServiceUnavailable", statusCode: 503, message: "busy" }],
    ["a generic send error", restError("REQUEST_SEND_ERROR", undefined, "socket hang up"), "identity", { code: "ConnectionFailed", message: "socket hang up" }],
    ["a connection reset", nodeError("ECONNRESET", "read ECONNRESET"), "identity", { code: "ECONNRESET", message: "read ECONNRESET" }],
    [
      "an AbortError",
      named("AbortError", "The operation was aborted."),
      "identity",
      { code: "Timeout", message: "the lookup did not complete within the configured lookup timeout" },
    ],
    [
      "a timeout signal's reason",
      new DOMException("signal timed out", "TimeoutError"),
      "identity",
      { code: "Timeout", message: "the lookup did not complete within the configured lookup timeout" },
    ],
    [
      "CredentialUnavailableError",
      named("CredentialUnavailableError", "ManagedIdentityCredential: unavailable"),
      "global",
      { code: "CredentialUnavailable", message: "ManagedIdentityCredential: unavailable" },
    ],
    [
      "AuthenticationRequiredError",
      named("AuthenticationRequiredError", "interactive sign-in required"),
      "global",
      { code: "CredentialUnavailable", message: "interactive sign-in required" },
    ],
    [
      "AuthenticationError (token endpoint 5xx or 401)",
      named("AuthenticationError", "token endpoint said 500"),
      "global",
      { code: "CredentialUnavailable", message: "token endpoint said 500" },
    ],
    [
      "AggregateAuthenticationError",
      named("AggregateAuthenticationError", "every credential failed"),
      "global",
      { code: "CredentialUnavailable", message: "every credential failed" },
    ],
    [
      "ARM 401",
      restError("InvalidAuthenticationToken", 401, "The access token is invalid."),
      "global",
      { code: "InvalidAuthenticationToken", statusCode: 401, message: "The access token is invalid." },
    ],
    ["ARM 401 without a code", restError(undefined, 401, "Unauthorized"), "global", { code: "HTTP401", statusCode: 401, message: "Unauthorized" }],
    [
      "DNS: ENOTFOUND",
      nodeError("ENOTFOUND", "getaddrinfo ENOTFOUND management.example"),
      "global",
      { code: "ENOTFOUND", message: "getaddrinfo ENOTFOUND management.example" },
    ],
    [
      "DNS: EAI_AGAIN",
      nodeError("EAI_AGAIN", "getaddrinfo EAI_AGAIN management.example"),
      "global",
      { code: "EAI_AGAIN", message: "getaddrinfo EAI_AGAIN management.example" },
    ],
    [
      "connection refused",
      nodeError("ECONNREFUSED", "connect ECONNREFUSED 127.0.0.1:1"),
      "global",
      { code: "ECONNREFUSED", message: "connect ECONNREFUSED 127.0.0.1:1" },
    ],
    [
      "connection refused, code on the cause",
      Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:1"), { code: "REQUEST_SEND_ERROR", cause: { code: "ECONNREFUSED" } }),
      "global",
      { code: "ECONNREFUSED", message: "connect ECONNREFUSED 127.0.0.1:1" },
    ],
    [
      "an untrusted certificate",
      nodeError("SELF_SIGNED_CERT_IN_CHAIN", "self-signed certificate in certificate chain"),
      "global",
      { code: "SELF_SIGNED_CERT_IN_CHAIN", message: "self-signed certificate in certificate chain" },
    ],
    [
      "an unverifiable leaf",
      nodeError("UNABLE_TO_VERIFY_LEAF_SIGNATURE", "unable to verify the first certificate"),
      "global",
      { code: "UNABLE_TO_VERIFY_LEAF_SIGNATURE", message: "unable to verify the first certificate" },
    ],
    [
      "a host name mismatch",
      nodeError("ERR_TLS_CERT_ALTNAME_INVALID", "Hostname/IP does not match certificate's altnames"),
      "global",
      { code: "ERR_TLS_CERT_ALTNAME_INVALID", message: "Hostname/IP does not match certificate's altnames" },
    ],
    ["a plain Error", new Error("boom"), "identity", { code: "Error", message: "boom" }],
    ["a TypeError", new TypeError("x is not a function"), "identity", { code: "TypeError", message: "x is not a function" }],
    ["a thrown string", "just a string", "identity", { code: "Error", message: "just a string" }],
  ])("classifies %s", (_title, error, kind, details) => {
    expect(classifyLookupError(error)).toEqual({ kind, details });
  });

  it.each([
    ["ARM's ResourceNotFound", armAnswer(404, '{"error":{"code":"ResourceNotFound","message":"gone"}}'), "notFound", "ResourceNotFound"],
    ["ResourceNotFound with another status, as upstream counts it", armAnswer(400, '{"error":{"code":"ResourceNotFound"}}'), "notFound", "ResourceNotFound"],
    ["SubscriptionNotFound", armAnswer(404, '{"error":{"code":"SubscriptionNotFound","message":"no"}}'), "identity", "SubscriptionNotFound"],
    ["ParentResourceNotFound", armAnswer(404, '{"error":{"code":"ParentResourceNotFound"}}'), "identity", "ParentResourceNotFound"],
    ["a 404 without a body (a misrouted endpoint)", armAnswer(404, ""), "identity", "HTTP404"],
    ["a 404 with a page of text", armAnswer(404, "<html><body>404 page not found</body></html>"), "identity", "HTTP404"],
    ["a 404 whose code is no string", armAnswer(404, '{"error":{"code":404}}'), "identity", "HTTP404"],
    ["a 404 whose error is no object", armAnswer(404, '{"error":"ResourceNotFound"}'), "identity", "HTTP404"],
    ["the code beside no error envelope", armAnswer(404, '{"code":"ResourceNotFound"}'), "notFound", "ResourceNotFound"],
    ["an OData error", armAnswer(404, '{"odata.error":{"code":"ResourceNotFound"}}'), "notFound", "ResourceNotFound"],
    ["an XML error", armAnswer(404, "<Error><Code> ResourceNotFound </Code></Error>"), "notFound", "ResourceNotFound"],
    [
      "x-ms-error-code before the body",
      armAnswer(404, '{"error":{"code":"ResourceNotFound"}}', { "x-ms-error-code": "SubscriptionNotFound" }),
      "identity",
      "SubscriptionNotFound",
    ],
    ["x-ms-error-code without a body", armAnswer(404, "", { "x-ms-error-code": "ResourceNotFound" }), "notFound", "ResourceNotFound"],
    ["a 401 with ResourceNotFound stays global", armAnswer(401, '{"error":{"code":"ResourceNotFound"}}'), "global", "ResourceNotFound"],
  ])("reads the Azure error code of %s as upstream's SDK does", (_title, error, kind, code) => {
    const classified = classifyLookupError(error);
    expect(classified.kind).toBe(kind);
    expect(classified.details.code).toBe(code);
  });

  it("says when a failed answer carries no Azure error code and no text", () => {
    expect(classifyLookupError(armAnswer(404, "")).details).toEqual({ code: "HTTP404", statusCode: 404, message: "the answer carries no Azure error code" });
  });

  it("reads no code from an error without an answer body", () => {
    expect(azureErrorCode(restError("ResourceNotFound", 404, "gone"))).toBeUndefined();
    expect(azureErrorCode(Object.assign(new Error("x"), { response: { headers: { get: () => undefined } } }))).toBeUndefined();
    expect(azureErrorCode(armAnswer(404, ""))).toBe("");
  });

  it("redacts a token in the message", () => {
    expect(classifyLookupError(restError("Unauthorized", 401, "Bearer abcdefghijklmnopqrstuvwxyz rejected")).details.message).toBe(
      "Bearer [redacted] rejected",
    );
  });
});

describe("AzureAccessError", () => {
  it("says nothing was written, names the credential in use and what to set, and has its name", () => {
    const error = new AzureAccessError({
      documentId: "doc-1",
      clusterName: "sub/rg/cluster",
      error: { code: "InvalidAuthenticationToken", statusCode: 401, message: "The access token is invalid." },
      credential: "the managed identity with client ID abc",
    });
    expect(error).toBeInstanceOf(AzureAccessError);
    expect(error.name).toBe("AzureAccessError");
    // Cause first, then the cluster by name, what was written, and the document once.
    expect(error.message).toMatch(
      /^Azure Resource Manager refused the credential's token \(InvalidAuthenticationToken \(HTTP 401\): The access token is invalid\);/,
    );
    expect(error.message).toContain(
      " Cluster sub/rg/cluster: no identity was checked; nothing was written (stored clientId/principalId values are unchanged). [ServiceProviderCluster document doc-1]",
    );
    expect(error.message.split("doc-1")).toHaveLength(2);
    // A credential's own failure is the cause; a file its description names is not printed twice.
    const missingFile = new AzureAccessError({
      documentId: "doc-1",
      clusterName: "sub/rg/cluster",
      error: {
        code: "CredentialUnavailable",
        message: "the certificate file /etc/fp/bundle.pem ('aro-hcp-identity-status:firstPartyCertificateFile') does not exist",
      },
      credential: "the first party abc in tenant t (certificate bundle /etc/fp/bundle.pem, 'aro-hcp-identity-status:firstPartyCertificateFile')",
    });
    expect(missingFile.message).toMatch(/^the certificate file \/etc\/fp\/bundle\.pem .* does not exist\. Cluster sub\/rg\/cluster: no identity was checked;/);
    expect(missingFile.message.split("/etc/fp/bundle.pem")).toHaveLength(2);
    expect(error.message).toContain("Credential in use: the managed identity with client ID abc.");
    expect(error.message).toContain("'aro-hcp-identity-status:managedIdentityClientId'");
  });

  it("points an unreachable endpoint at armEndpoint and tlsCaFile", () => {
    const error = new AzureAccessError({ documentId: "doc-1", error: { code: "ECONNREFUSED", message: "connect ECONNREFUSED" }, credential: undefined });
    expect(error.message).toContain("cannot be reached");
    expect(error.message).toContain("'aro-hcp-identity-status:armEndpoint'");
    expect(error.message).toContain("'aro-hcp-identity-status:tlsCaFile'");
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
    expect(describeCosmosError(cosmosError(412, "One of the specified pre-condition is not met."))).toBe(
      "PreconditionFailed (HTTP 412): One of the specified pre-condition is not met.",
    );
  });

  it("falls back to the message and a generic code", () => {
    expect(describeCosmosError(Object.assign(new Error("Message: socket hang up"), { code: 503 }))).toBe("CosmosError (HTTP 503): socket hang up");
  });

  it("tells a request that may have reached Cosmos without an answer from one that never left or was answered", () => {
    const withCode = (code: string): Error => Object.assign(new Error("socket hang up"), { name: "RestError", code });
    for (const code of ["ECONNRESET", "EPIPE", "ECONNABORTED", "ETIMEDOUT", "TimeoutError"]) expect(isUnansweredCosmosRequest(withCode(code))).toBe(true);
    expect(isUnansweredCosmosRequest(new Error("fetch failed", { cause: Object.assign(new Error("reset"), { code: "ECONNRESET" }) }))).toBe(true);
    // Never reached Cosmos: nothing landed.
    for (const code of ["ECONNREFUSED", "ENOTFOUND", "ERR_TLS_CERT_ALTNAME_INVALID"]) expect(isUnansweredCosmosRequest(withCode(code))).toBe(false);
    // Answered, or not a network failure at all.
    expect(isUnansweredCosmosRequest(cosmosError(412))).toBe(false);
    expect(isUnansweredCosmosRequest(Object.assign(withCode("ECONNRESET"), { statusCode: 503 }))).toBe(false);
    expect(isUnansweredCosmosRequest(new TypeError("x is undefined"))).toBe(false);
    expect(isUnansweredCosmosRequest(undefined)).toBe(false);
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
      "2 data plane operator managed identities could not be read: AuthorizationFailed (HTTP 403), Timeout; " +
        "the other identities were written; the failed entries carry a retrievalError. [ServiceProviderCluster document doc-1]\n" +
        "  - /a: AuthorizationFailed (HTTP 403): no\n  - /b: Timeout: slow",
    );
    expect(error.name).toBe("UserAssignedIdentityReadError");
    expect(error).toBeInstanceOf(UserAssignedIdentityReadError);
    expect(isCosmosDocumentError(error)).toBe(false);
  });

  it("uses the singular for one identity and says when nothing was written", () => {
    const error = new UserAssignedIdentityReadError({
      documentId: "d",
      clusterName: "sub/rg/c",
      persisted: false,
      failures: [{ resourceId: "/a", error: { code: "X", message: "y" } }],
    });
    expect(error.message).toContain(
      "a data plane operator managed identity could not be read: X. Cluster sub/rg/c: nothing was written. [ServiceProviderCluster document d]",
    );
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
    expect(value).not.toBeInstanceOf(UserAssignedIdentityReadError);
  });

  it("names a SettingsError", () => {
    const error = new SettingsError(["bad"]);
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe("SettingsError");
    expect(error.message).toBe("bad");
  });
});

describe("withMsiWritten", () => {
  it("says which half was not written when the MSI half was", () => {
    const message = withMsiWritten(`the credential failed. Cluster s/rg/c: ${nothingWritten}. [x]`);
    expect(message).toContain("nothing of status.dataPlaneOperatorsManagedIdentities was written");
    expect(message).toContain("status.msiManagedIdentities was written");
    expect(message).not.toContain(nothingWritten);
  });
});
