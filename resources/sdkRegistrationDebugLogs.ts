/**
 * Opt-in: the Pulumi Node SDK's three debug lines per registered resource (`Registering resource`,
 * `RegisterResource RPC prepared`, `RegisterResource RPC finished`), kept out of the engine. In a
 * fleet program they are most of the program's RPCs and each becomes an event of the update.
 *
 * Nothing here runs unless the program calls {@link quietSdkRegistrationDebugLogs}. Then the SDK's
 * `log.debug` (the program's own @pulumi/pulumi: the SDK is a peer dependency) is wrapped once and
 * drops those lines when they name this resource type and report no error; every other line goes
 * through. `ARO_HCP_SDK_DEBUG_LOGS=all` keeps them all (read at every line); `quiet` is the default.
 *
 * It relies on the SDK's wording of those lines (runtime/resource.ts): if a later SDK words them
 * differently, they reach the engine again, and test/program/sdkDebugLogs.test.ts fails first.
 */
import * as sdkLog from "@pulumi/pulumi/log";
import { resourceTypeToken } from "./serviceProviderClusterIdentityStatus";

/** Environment variables, as `process.env` holds them (no Node types in the package's declarations). */
export type Environment = Readonly<Record<string, string | undefined>>;

const sdkDebugLogsVariable = "ARO_HCP_SDK_DEBUG_LOGS";
export const sdkDebugLogsValues = ["quiet", "all"] as const;
export type SdkDebugLogs = (typeof sdkDebugLogsValues)[number];

/** The choice in `environment`: `quiet` when unset or empty; anything else is refused. */
export function sdkDebugLogsFrom(environment: Environment): SdkDebugLogs {
  const raw = environment[sdkDebugLogsVariable];
  if (raw === undefined || raw.trim() === "") {
    return "quiet";
  }
  const value = raw.trim().toLowerCase();
  const known = sdkDebugLogsValues.find((name) => name === value);
  if (known !== undefined) {
    return known;
  }
  throw new RangeError(`${sdkDebugLogsVariable} must be one of ${sdkDebugLogsValues.map((name) => `"${name}"`).join(", ")}; got ${JSON.stringify(raw)}`);
}

/** Whether `message` is one of the SDK's three successful-registration lines about a resource of type `typeToken`. */
export function isSdkRegistrationLine(message: unknown, typeToken: string): boolean {
  if (typeof message !== "string") {
    return false;
  }
  if (message.startsWith("Registering resource: ") || message.startsWith("RegisterResource RPC prepared: ")) {
    return message.includes(`: t=${typeToken}, name=`);
  }
  return message.startsWith("RegisterResource RPC finished: resource:") && message.includes(`[${typeToken}]; err: null, `);
}

/** The `log` module's shape this needs: the SDK's, or a test's stand-in. */
export interface DebugLogModule {
  debug: (message: string, ...rest: never[]) => Promise<void>;
}

/** The filters in place, by log module and type token, each with its undo; kept off the SDK's module. */
const installed = new WeakMap<DebugLogModule, Map<string, () => void>>();

/**
 * Wraps `logModule.debug` once per module and type: matching lines are dropped while the variable
 * says `quiet`. The undo puts `debug` back unless something wrapped it since (then this wrapper
 * stays in the chain and passes every line).
 */
export function quietSdkRegistrationLines(typeToken: string, logModule: DebugLogModule = sdkLog, environment: Environment = process.env): () => void {
  const filters = installed.get(logModule) ?? new Map<string, () => void>();
  const existing = filters.get(typeToken);
  if (existing !== undefined) {
    return existing;
  }
  const inner = logModule.debug;
  let active = true;
  const wrapper = function debug(this: unknown, message: string, ...rest: never[]): Promise<void> {
    if (active && isSdkRegistrationLine(message, typeToken) && sdkDebugLogsIsQuiet(environment)) {
      return Promise.resolve();
    }
    return inner.call(this, message, ...rest);
  };
  logModule.debug = wrapper;
  const undo = (): void => {
    if (!active) {
      return;
    }
    active = false;
    if (logModule.debug === wrapper) {
      logModule.debug = inner;
    }
    filters.delete(typeToken);
    if (filters.size === 0) {
      installed.delete(logModule);
    }
  };
  filters.set(typeToken, undo);
  installed.set(logModule, filters);
  return undo;
}

/**
 * Opt-in for a program that declares many of these resources: keeps the SDK's three debug lines per
 * successful registration of a `ServiceProviderClusterIdentityStatus` out of the engine, unless
 * `ARO_HCP_SDK_DEBUG_LOGS=all`. Call it once, before declaring resources. Without it, the SDK's
 * logger is never touched.
 * @throws RangeError when `ARO_HCP_SDK_DEBUG_LOGS` is anything but `quiet` or `all`, before anything is wrapped.
 * @returns a function that puts the SDK's `log.debug` back.
 */
export function quietSdkRegistrationDebugLogs(): () => void {
  sdkDebugLogsFrom(process.env);
  return quietSdkRegistrationLines(resourceTypeToken);
}

/** An unreadable value counts as `all`: a log line is no place to throw. */
function sdkDebugLogsIsQuiet(environment: Environment): boolean {
  try {
    return sdkDebugLogsFrom(environment) === "quiet";
  } catch {
    return false;
  }
}
