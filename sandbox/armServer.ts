import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer } from "node:https";
import type { SandboxCertificate } from "./certificate";
import { identityReadAction } from "./entraDirectory";
import type { FaultInjector, FaultRule } from "./faultInjector";
import { editArmAnswer } from "./answerEdits";
import { applyFaults, delay, listenOnLoopback, type ListeningServer, loopbackHost, sendBareStatus, sendJson, trackInFlight } from "./httpUtilities";
import { type IdentityStore, parseIdentityResourceId, sandboxLocation, sandboxTenantId, userAssignedIdentityType } from "./identityStore";
import { recordedExchange, recordedToken, type RequestRecorder } from "./requestRecorder";
import { objectIdForClientId, type SandboxCredentials } from "./sandboxCredentials";
import { increment, type SandboxStatistics } from "./sandboxStatistics";
import type { IssuedToken, TokenRegistry } from "./tokenRegistry";

/** What the fake ARM needs from the rest of the sandbox. */
export interface ArmServerOptions {
  certificate: SandboxCertificate;
  identities: IdentityStore;
  tokens: TokenRegistry;
  faults: FaultInjector;
  statistics: SandboxStatistics;
  /** Role assignments, and whether tokens of the managed-identity endpoint are authorized per cluster too. */
  credentials: SandboxCredentials;
  /** Where requests are recorded (no token, only its audience, tenant and client), when a recording runs. */
  recorder?: RequestRecorder;
}

/** A running fake ARM. */
export interface ArmServer extends ListeningServer {
  /** `https://127.0.0.1:<port>`, to pass as the arm-msi client's `endpoint`. */
  endpoint: string;
}

/** Token audiences ARM accepts, besides the sandbox's own endpoint. */
const armAudiences = ["https://management.azure.com", "https://management.core.windows.net"];

function armError(code: string, message: string): { error: { code: string; message: string } } {
  return { error: { code, message } };
}

function bearerToken(request: IncomingMessage): string | undefined {
  const header = request.headers.authorization;
  const match = header === undefined ? null : /^Bearer\s+(\S+)$/i.exec(header);
  return match?.[1];
}

/** @returns The error message when the request's token is not acceptable, or the token when it is. */
function authenticate(options: ArmServerOptions, request: IncomingMessage, endpoint: string): { problem: string } | { issued: IssuedToken } {
  const verification = options.tokens.verify(bearerToken(request));
  if (!verification.valid) {
    return {
      problem: {
        missing: "Authentication failed. The 'Authorization' header is missing or is not a Bearer token.",
        unknown: "The access token is invalid.",
        expired: `The access token expiry UTC time is earlier than current UTC time '${new Date().toISOString()}'.`,
      }[verification.reason],
    };
  }
  const audience = verification.issued.resource.replace(/\/+$/, "");
  if (![...armAudiences, endpoint].includes(audience)) {
    return { problem: `The access token has been obtained for wrong audience or resource '${verification.issued.resource}'.` };
  }
  return { issued: verification.issued };
}

/**
 * The object ID ARM sees for a token: the Entra principal's, or for a managed-identity endpoint
 * token (the process credential) one derived from the client ID asked for.
 *
 * @param issued - The token.
 * @returns The caller's object ID.
 */
function callerObjectId(issued: IssuedToken): string {
  return issued.principal?.objectId ?? objectIdForClientId(issued.clientId ?? "sandbox-process-credential");
}

/**
 * @returns Whether the caller may read the identity: Entra principals need a role assignment over
 *   it; the process credential reads everything unless the sandbox runs in per-cluster mode.
 */
function authorized(options: ArmServerOptions, issued: IssuedToken, identityId: string): boolean {
  if (issued.principal === undefined && !options.credentials.settings.perClusterCredentials) return true;
  return options.credentials.directory.canRead(callerObjectId(issued), identityId);
}

function faultResponse(rule: FaultRule): { statusCode: number; code: string; headers: Record<string, string> } {
  const retryAfter = rule.retryAfterSeconds ?? (rule.kind === "throttle" ? 1 : undefined);
  const headers: Record<string, string> = retryAfter === undefined ? {} : { "retry-after": String(retryAfter) };
  if (rule.kind === "throttle") {
    return { statusCode: 429, code: rule.errorCode ?? "TooManyRequests", headers };
  }
  if (rule.kind === "unavailable") {
    return { statusCode: 503, code: rule.errorCode ?? "ServiceUnavailable", headers };
  }
  return { statusCode: rule.statusCode ?? 500, code: rule.errorCode ?? "InternalServerError", headers };
}

async function handle(options: ArmServerOptions, endpoint: string, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const statistics = options.statistics.arm;
  let presented: IssuedToken | undefined = undefined;
  const reply = (statusCode: number, body: unknown, headers: Record<string, string> = {}): void => {
    increment(statistics.responsesByStatus, String(statusCode));
    sendJson(response, statusCode, body, headers);
    if (options.recorder?.active === true) {
      const code = (body as { error?: { code?: unknown } } | undefined)?.error?.code;
      options.recorder.record({
        ...recordedExchange("arm", request, statusCode, code),
        ...(presented === undefined ? {} : { token: recordedToken(presented) }),
      });
    }
  };
  const url = new URL(request.url ?? "/", endpoint);
  const path = decodeURIComponent(url.pathname);
  const parts = parseIdentityResourceId(path);
  if (request.method === "GET") {
    statistics.getRequests += 1;
    if (parts !== undefined) {
      increment(statistics.requestsByIdentity, path.toLowerCase());
    }
  }
  const authentication = authenticate(options, request, endpoint);
  if ("problem" in authentication) {
    const { problem } = authentication;
    await delay(options.faults.getLatency().arm);
    reply(401, armError("InvalidAuthenticationToken", problem), {
      "www-authenticate": `Bearer authorization_uri="https://login.microsoftonline.com/${sandboxTenantId}", error="invalid_token", error_description="${problem.replace(/"/g, "'")}"`,
    });
    return;
  }
  presented = authentication.issued;
  const subscriptionId = /^\/subscriptions\/([^/]+)/i.exec(path)?.[1];
  const tokenTenant = authentication.issued.principal?.tenantId;
  if (subscriptionId !== undefined && tokenTenant !== undefined) {
    const subscriptionTenant = options.credentials.subscriptionTenant(subscriptionId);
    if (tokenTenant.toLowerCase() !== subscriptionTenant.toLowerCase()) {
      await delay(options.faults.getLatency().arm);
      reply(
        401,
        armError(
          "InvalidAuthenticationTokenTenant",
          `The access token is from the wrong issuer 'https://sts.windows.net/${tokenTenant}/'. It must match the tenant 'https://sts.windows.net/${subscriptionTenant}/' associated with this subscription. Please use the authority (URL) '${options.credentials.entraAuthorityHost}/${subscriptionTenant}' to get the token. Note, if the subscription is transferred to another tenant there is no impact to the services, but information about new tenant could take time to propagate (up to an hour). If you just transferred your subscription and see this error message, please try back later.`,
        ),
        {
          "www-authenticate": `Bearer authorization_uri="${options.credentials.entraAuthorityHost}/${subscriptionTenant}", error="invalid_token", error_description="The access token is from the wrong issuer."`,
        },
      );
      return;
    }
  }
  if (parts !== undefined && !authorized(options, authentication.issued, path)) {
    await delay(options.faults.getLatency().arm);
    const objectId = callerObjectId(authentication.issued);
    reply(
      403,
      armError(
        "AuthorizationFailed",
        `The client '${objectId}' with object id '${objectId}' does not have authorization to perform action '${identityReadAction}' over scope '${path}' or the scope is invalid. If access was recently granted, please refresh your credentials.`,
      ),
    );
    return;
  }
  const rule = await applyFaults(
    options.faults,
    { target: "arm", method: request.method ?? "GET", path, ...(parts === undefined ? {} : { resourceId: path }) },
    request,
    statistics.responsesByStatus,
  );
  if (rule === "reset") {
    return;
  }
  if (rule?.kind === "bareStatus") {
    const statusCode = sendBareStatus(response, rule, statistics.responsesByStatus);
    if (options.recorder?.active === true) options.recorder.record(recordedExchange("arm", request, statusCode, undefined));
    return;
  }
  if (rule !== undefined && rule.kind !== "noProperties" && rule.kind !== "malformedAnswer") {
    const fault = faultResponse(rule);
    const retryAfter = fault.headers["retry-after"];
    if (retryAfter !== undefined) {
      statistics.retryAfterSecondsRequested += Number(retryAfter);
    }
    reply(fault.statusCode, armError(fault.code, rule.message ?? `Sandbox fault '${rule.kind}' (rule ${rule.id}).`), fault.headers);
    return;
  }
  if (!url.searchParams.has("api-version")) {
    reply(400, armError("MissingApiVersionParameter", "The api-version query parameter (?api-version=) is required for all requests."));
    return;
  }
  if (parts === undefined) {
    reply(
      404,
      armError("InvalidResourceType", `The resource type could not be found for path '${path}'. The sandbox serves only ${userAssignedIdentityType}.`),
    );
    return;
  }
  if (request.method !== "GET") {
    reply(405, armError("MethodNotAllowed", `The sandbox ARM serves only GET for ${userAssignedIdentityType}.`));
    return;
  }
  const identity = options.identities.get(path);
  if (identity === undefined) {
    reply(
      404,
      armError(
        "ResourceNotFound",
        `The Resource '${userAssignedIdentityType}/${parts.name}' under resource group '${parts.resourceGroupName}' was not found. For more details please go to https://aka.ms/ARMResourceNotFoundFix`,
      ),
    );
    return;
  }
  const body = {
    id: identity.id,
    name: identity.name,
    type: userAssignedIdentityType,
    location: identity.location || sandboxLocation,
    tags: {},
    ...(rule?.kind === "noProperties" ? {} : { properties: { tenantId: identity.tenantId, principalId: identity.principalId, clientId: identity.clientId } }),
  };
  reply(200, rule?.kind === "malformedAnswer" ? editArmAnswer(body, rule.answerEdits ?? []) : body);
}

/**
 * Starts a fake Azure Resource Manager over HTTPS on 127.0.0.1 that serves
 * `GET …/providers/Microsoft.ManagedIdentity/userAssignedIdentities/{name}?api-version=…` from the
 * {@link IdentityStore}. Every request needs a live bearer token from the sandbox token endpoint,
 * issued for the ARM audience. Errors use the ARM envelope `{"error":{"code","message"}}`.
 *
 * @param options - The certificate and the shared sandbox state.
 * @returns The running server and its endpoint.
 */
export async function startArmServer(options: ArmServerOptions): Promise<ArmServer> {
  let endpoint = "";
  const server = createServer({ key: options.certificate.privateKeyPem, cert: options.certificate.certificatePem, keepAlive: true }, (request, response) => {
    trackInFlight(response, () => options.statistics.arm);
    handle(options, endpoint, request, response).catch((error: unknown) => {
      increment(options.statistics.arm.responsesByStatus, "500");
      sendJson(response, 500, armError("InternalServerError", String(error)));
    });
  });
  const listening = await listenOnLoopback(server);
  endpoint = `https://${loopbackHost}:${listening.port}`;
  return { ...listening, endpoint };
}
