/**
 * Opt-in: the Pulumi Node SDK's own debug lines about registering this package's resource, kept
 * out of the engine.
 *
 * For every resource it registers, the SDK sends the engine three debug-level Log RPCs
 * (`Registering resource: t=…`, `RegisterResource RPC prepared: t=…`, `RegisterResource RPC
 * finished: resource:…; err: null, …`). The engine turns each into an event of the update (shown
 * with `--debug`, uploaded with the update to a service backend). In a fleet program they are
 * most of the program's RPCs, and a visible share of a first `up`'s CPU in both the program and
 * the engine (docs/performance.md). Pulumi itself put the SDK's other per-registration debug
 * lines behind a debugging switch for that reason; these three are not.
 *
 * Nothing here runs unless the program calls {@link quietSdkRegistrationDebugLogs}: constructing a
 * resource leaves the SDK as it was. Once called, the SDK's `log.debug` (of the @pulumi/pulumi this
 * package resolves, which is the program's own: the SDK is a peer dependency) is wrapped once and
 * drops those three lines when they name this resource type and report no error. Every other debug
 * line (other resource types, the stack, failed registrations, the program's own) goes through as
 * before. `ARO_HCP_SDK_DEBUG_LOGS=all` keeps them all (read at every line, so a program can switch);
 * `quiet`, the default, drops them.
 *
 * It relies on the SDK's wording of those lines (the same from @pulumi/pulumi 3.139 to 3.248): if a
 * later SDK words them differently, the filter matches nothing and they reach the engine again, as
 * without the opt-in. test/program/sdkDebugLogs.test.ts (the real SDK under mocks) fails first.
 */
import * as sdkLog from "@pulumi/pulumi/log";
import { resourceTypeToken } from "./serviceProviderClusterIdentityStatus";

/** Environment variables, as `process.env` holds them (no Node types in the package's declarations). */
export type Environment = Readonly<Record<string, string | undefined>>;

/** The variable that chooses; its values. */
export const sdkDebugLogsVariable = "ARO_HCP_SDK_DEBUG_LOGS";
export const sdkDebugLogsValues = ["quiet", "all"] as const;
export type SdkDebugLogs = (typeof sdkDebugLogsValues)[number];

/**
 * The choice in `environment`: `quiet` when unset or empty. Anything else is refused, naming the
 * variable and what it may be.
 */
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

/**
 * Whether `message` is one of the SDK's three successful-registration lines about a resource of
 * type `typeToken` (formats of @pulumi/pulumi's runtime/resource.ts, pinned by
 * test/program/sdkDebugLogs.test.ts over the real SDK and test/e2e/sdkDebugLogs.test.ts against
 * the real engine).
 */
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

/**
 * The filters in place, by log module and type token, each with what undoes it. Kept here rather
 * than on the module, so that the only property of the SDK's module this changes is `debug`.
 */
const installed = new WeakMap<DebugLogModule, Map<string, () => void>>();

/**
 * Wraps `logModule.debug` (the SDK's by default) once per module and type: lines that
 * {@link isSdkRegistrationLine} matches are dropped while {@link sdkDebugLogsFrom} says `quiet`.
 * Called again for the same module and type, it wraps nothing more and returns the same undo.
 * @returns a function that undoes it: `debug` is put back as it was found, unless something wrapped
 * it since (then this wrapper stays in that chain and passes every line).
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
 * successful registration of a `ServiceProviderClusterIdentityStatus` out of the engine (see the
 * module comment), unless `ARO_HCP_SDK_DEBUG_LOGS=all`. Call it once, before declaring resources;
 * calling it again changes nothing. Without it, the SDK's logger is never touched.
 * @throws RangeError when `ARO_HCP_SDK_DEBUG_LOGS` is set to anything but `quiet` or `all`, before
 * anything is wrapped.
 * @returns a function that puts the SDK's `log.debug` back.
 */
export function quietSdkRegistrationDebugLogs(): () => void {
  sdkDebugLogsFrom(process.env);
  return quietSdkRegistrationLines(resourceTypeToken);
}

/**
 * An unreadable value counts as `all` here: a log line is no place to throw, and
 * {@link quietSdkRegistrationDebugLogs} refuses it when called.
 */
function sdkDebugLogsIsQuiet(environment: Environment): boolean {
  try {
    return sdkDebugLogsFrom(environment) === "quiet";
  } catch {
    return false;
  }
}
