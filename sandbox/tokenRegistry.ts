import { randomBytes } from "node:crypto";

/** A bearer token issued by the sandbox token endpoint. */
export interface IssuedToken {
  /** The opaque token string sent as `Authorization: Bearer <token>` (or Cosmos `sig=`). */
  token: string;
  /** When the token stops being accepted, in milliseconds since the epoch. */
  expiresOnInMs: number;
  /** The resource (scope without `/.default`) the token was requested for. */
  resource: string;
  /** The user-assigned identity client ID asked for, if any. */
  clientId?: string;
  /**
   * Who the token was issued to, for tokens from the sandbox Entra (client credentials). Tokens from
   * the managed-identity endpoint (the process credential) have none.
   */
  principal?: TokenPrincipal;
}

/** The principal a sandbox Entra token stands for (its `tid`, `appid` and `oid` claims). */
export interface TokenPrincipal {
  tenantId: string;
  clientId: string;
  objectId: string;
  kind: "application" | "managedIdentity";
}

/** Why a token was rejected. */
export type TokenRejection = "missing" | "unknown" | "expired";

/** The outcome of checking a token. */
export type TokenVerification = { valid: true; issued: IssuedToken } | { valid: false; reason: TokenRejection };

/** The default token lifetime: one hour, like Entra ID. */
export const defaultTokenLifetimeInMs = 60 * 60 * 1000;

/**
 * The tokens the sandbox has issued, shared by the token endpoint (which issues them) and the ARM
 * and Cosmos servers (which verify them). Tokens are random opaque strings, not JWTs.
 */
export class TokenRegistry {
  private readonly tokens = new Map<string, IssuedToken>();

  /**
   * @param lifetimeInMs - How long a newly issued token is accepted.
   */
  constructor(private lifetimeInMs: number = defaultTokenLifetimeInMs) {}

  /** The lifetime given to newly issued tokens, in milliseconds. */
  get tokenLifetimeInMs(): number {
    return this.lifetimeInMs;
  }

  /**
   * Changes the lifetime of tokens issued from now on.
   *
   * @param lifetimeInMs - The new lifetime in milliseconds; must be positive.
   * @throws RangeError when the lifetime is not a positive number.
   */
  setTokenLifetime(lifetimeInMs: number): void {
    if (!Number.isFinite(lifetimeInMs) || lifetimeInMs <= 0) {
      throw new RangeError(`token lifetime must be a positive number of milliseconds, got ${lifetimeInMs}`);
    }
    this.lifetimeInMs = lifetimeInMs;
  }

  /**
   * Issues a new token.
   *
   * @param resource - The resource the token is for.
   * @param clientId - The user-assigned identity client ID asked for, if any.
   * @param principal - Who the token is issued to (sandbox Entra tokens).
   * @returns The issued token.
   */
  issue(resource: string, clientId?: string, principal?: TokenPrincipal): IssuedToken {
    const issued: IssuedToken = {
      token: `sandbox-${randomBytes(24).toString("base64url")}`,
      expiresOnInMs: Date.now() + this.lifetimeInMs,
      resource,
      ...(clientId === undefined ? {} : { clientId }),
      ...(principal === undefined ? {} : { principal: { ...principal } }),
    };
    this.tokens.set(issued.token, issued);
    return issued;
  }

  /**
   * Checks a presented token.
   *
   * @param token - The token string, or undefined when none was presented.
   * @returns Whether the token is valid and, if so, what it was issued for.
   */
  verify(token: string | undefined): TokenVerification {
    if (token === undefined || token === "") {
      return { valid: false, reason: "missing" };
    }
    const issued = this.tokens.get(token);
    if (issued === undefined) {
      return { valid: false, reason: "unknown" };
    }
    if (issued.expiresOnInMs <= Date.now()) {
      return { valid: false, reason: "expired" };
    }
    return { valid: true, issued };
  }

  /**
   * Every token string issued so far, so tests can check that none leaked into state or logs.
   *
   * @returns The token strings, oldest first.
   */
  issuedTokens(): string[] {
    return [...this.tokens.keys()];
  }

  /**
   * Makes every token issued so far expire now, so clients holding cached tokens get 401.
   *
   * @returns How many tokens were expired.
   */
  expireAll(): number {
    const now = Date.now();
    for (const issued of this.tokens.values()) {
      issued.expiresOnInMs = Math.min(issued.expiresOnInMs, now);
    }
    return this.tokens.size;
  }
}
