/**
 * A UserAssignedIdentityReader answering from a script keyed by the lowercased identity ID.
 * Records every call and the concurrency it observed. An identity that is not in the script is
 * an unexpected call: it is recorded in `unexpectedCalls` and rejected.
 */
import type { ParsedResourceId } from "../../resources/core/azureResourceId";
import type { UserAssignedIdentityReader, UserAssignedIdentityValues } from "../../resources/azure/userAssignedIdentityReader";
import { goToLower } from "../../resources/core/goStrings";

/** What the fake does for one identity. */
export type IdentityScript =
  | { readonly values: UserAssignedIdentityValues }
  /** ARM answered 200 without `properties`. */
  | { readonly withoutProperties: true }
  | { readonly error: unknown }
  /** Never settles, whatever the abort signal does. */
  | { readonly hang: "ignoringAbort" }
  /** Never settles on its own; rejects with the signal's reason when aborted, as the SDK does. */
  | { readonly hang: "untilAborted" };

/** A RestError-shaped error as @azure/core-rest-pipeline throws it. */
export type RestErrorLike = Error & { name: "RestError"; code?: string; statusCode?: number };

/** Builds an error shaped like @azure/core-rest-pipeline's RestError. */
export function restError(code: string | undefined, statusCode: number | undefined, message: string): RestErrorLike {
  return Object.assign(new Error(message), { name: "RestError" as const, code, statusCode });
}

/** ARM's answer for a missing identity, with its real message text. */
export function resourceNotFoundError(resourceId: string): RestErrorLike {
  const name = resourceId.split("/").pop();
  const resourceGroup = resourceId.split("/")[4];
  return restError(
    "ResourceNotFound",
    404,
    `The Resource 'Microsoft.ManagedIdentity/userAssignedIdentities/${name}' under resource group '${resourceGroup}' was not found. For more details please go to https://aka.ms/ARMResourceNotFoundFix`,
  );
}

/** One recorded lookup. */
export interface LookupCall {
  readonly key: string;
  readonly resourceId: ParsedResourceId;
  readonly abortSignal: AbortSignal;
}

/** See the module comment. */
export class ScriptedUserAssignedIdentityReader implements UserAssignedIdentityReader {
  readonly calls: LookupCall[] = [];
  readonly unexpectedCalls: string[] = [];
  private readonly scripts = new Map<string, IdentityScript>();
  private activeCount = 0;
  private peakCount = 0;

  /**
   * @param scripts identity ID (any casing) → script
   * @param delayInMs how long each answer takes (a macrotask), so overlapping calls are observable
   */
  constructor(
    scripts: Readonly<Record<string, IdentityScript>> = {},
    private readonly delayInMs = 1,
  ) {
    for (const [resourceId, script] of Object.entries(scripts)) {
      this.set(resourceId, script);
    }
  }

  /** Sets or replaces the script of one identity. */
  set(resourceId: string, script: IdentityScript): this {
    this.scripts.set(goToLower(resourceId), script);
    return this;
  }

  get active(): number {
    return this.activeCount;
  }

  /** Most lookups in flight at once. */
  get peak(): number {
    return this.peakCount;
  }

  /** Lowercased keys looked up, in call order. */
  get calledKeys(): string[] {
    return this.calls.map((call) => call.key);
  }

  async getUserAssignedIdentity(resourceId: ParsedResourceId, options: { readonly abortSignal: AbortSignal }): Promise<UserAssignedIdentityValues | undefined> {
    const key = resourceId.key;
    this.calls.push({ key, resourceId, abortSignal: options.abortSignal });
    const script = this.scripts.get(key);
    if (script === undefined) {
      this.unexpectedCalls.push(key);
      throw new Error(`unexpected lookup of identity ${key}: not in the script`);
    }
    this.activeCount += 1;
    this.peakCount = Math.max(this.peakCount, this.activeCount);
    try {
      if ("hang" in script) {
        return await new Promise<never>((_resolve, reject) => {
          if (script.hang === "untilAborted") {
            const onAbort = (): void => {
              // The signal's reason (a DOMException "AbortError" by default) is an Error; anything else is wrapped.
              const reason: unknown = options.abortSignal.reason;
              reject(reason instanceof Error ? reason : Object.assign(new Error("The operation was aborted.", { cause: reason }), { name: "AbortError" }));
            };
            if (options.abortSignal.aborted) onAbort();
            else options.abortSignal.addEventListener("abort", onAbort, { once: true });
          }
        });
      }
      await new Promise((resolve) => setTimeout(resolve, this.delayInMs));
      if ("error" in script) {
        throw script.error;
      }
      if ("withoutProperties" in script) {
        return undefined;
      }
      return { ...script.values };
    } finally {
      this.activeCount -= 1;
    }
  }
}
