/**
 * Opt-in: drops the Pulumi Node SDK's three debug lines per successful registration of this
 * resource type (most of a fleet program's engine events). It relies on the SDK's wording of those
 * lines; test/program/sdkDebugLogs.test.ts fails first if a later SDK changes it.
 */
import * as sdkLog from "@pulumi/pulumi/log";
import { resourceTypeToken } from "./serviceProviderClusterIdentityStatus";

const sdkDebugLogsVariable = "ARO_HCP_SDK_DEBUG_LOGS";
const sdkDebugLogsValues = ["quiet", "all"] as const;

/** The variable's value, `quiet` when unset or blank; any other is a RangeError naming it. */
export function sdkDebugLogsFrom(environment: NodeJS.ProcessEnv): (typeof sdkDebugLogsValues)[number] {
  const raw = environment[sdkDebugLogsVariable] ?? "";
  const value = raw.trim().toLowerCase() || "quiet";
  const known = sdkDebugLogsValues.find((name) => name === value);
  if (known !== undefined) return known;
  throw new RangeError(`${sdkDebugLogsVariable} must be one of ${sdkDebugLogsValues.map((name) => `"${name}"`).join(", ")}; got ${JSON.stringify(raw)}`);
}

export function isSdkRegistrationLine(message: unknown, typeToken: string): boolean {
  if (typeof message !== "string") return false;
  if (message.startsWith("Registering resource: ") || message.startsWith("RegisterResource RPC prepared: ")) return message.includes(`: t=${typeToken}, name=`);
  return message.startsWith("RegisterResource RPC finished: resource:") && message.includes(`[${typeToken}]; err: null, `);
}

export interface DebugLogModule {
  debug: (message: string, ...rest: never[]) => Promise<void>;
}

const installed = new WeakMap<DebugLogModule, Map<string, () => void>>();

/** Wraps `logModule.debug` once per module and type; the undo restores it unless something wrapped it since. */
export function quietSdkRegistrationLines(typeToken: string, logModule: DebugLogModule = sdkLog, environment: NodeJS.ProcessEnv = process.env): () => void {
  const filters = installed.get(logModule) ?? new Map<string, () => void>();
  const existing = filters.get(typeToken);
  if (existing !== undefined) return existing;
  const inner = logModule.debug;
  let active = true;
  const wrapper = function debug(this: unknown, message: string, ...rest: never[]): Promise<void> {
    if (active && isSdkRegistrationLine(message, typeToken) && sdkDebugLogsIsQuiet(environment)) return Promise.resolve();
    return inner.call(this, message, ...rest);
  };
  logModule.debug = wrapper;
  const undo = (): void => {
    if (!active) return;
    active = false;
    if (logModule.debug === wrapper) logModule.debug = inner;
    filters.delete(typeToken);
    if (filters.size === 0) installed.delete(logModule);
  };
  filters.set(typeToken, undo);
  installed.set(logModule, filters);
  return undo;
}

/**
 * Keeps the SDK's registration debug lines of this resource type out of the engine unless
 * `ARO_HCP_SDK_DEBUG_LOGS=all`. Throws a RangeError on any other value; returns the undo.
 */
export function quietSdkRegistrationDebugLogs(): () => void {
  sdkDebugLogsFrom(process.env);
  return quietSdkRegistrationLines(resourceTypeToken);
}

/** An unreadable value counts as `all`: a log line is no place to throw. */
function sdkDebugLogsIsQuiet(environment: NodeJS.ProcessEnv): boolean {
  try {
    return sdkDebugLogsFrom(environment) === "quiet";
  } catch {
    return false;
  }
}
