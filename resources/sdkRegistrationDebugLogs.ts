/**
 * The Pulumi Node SDK's own debug lines about registering this package's resource, kept out of
 * the engine unless asked for.
 *
 * For every resource it registers, the SDK sends the engine three debug-level Log RPCs
 * (`Registering resource: t=…`, `RegisterResource RPC prepared: t=…`, `RegisterResource RPC
 * finished: resource:…; err: null, …`). The engine turns each into an event of the update (shown
 * with `--debug`, uploaded with the update to a service backend). In a fleet program they are
 * most of the program's RPCs: at 2,000 clusters 6,000 of them cost the program about 6.7 s of CPU
 * and the engine about 2.4 s, and a first `up` about 7 % of its time (five pairs;
 * docs/performance.md, finding 23). Pulumi itself put the SDK's other per-registration debug
 * lines behind a debugging switch for that reason; these three are not.
 *
 * So the first {@link ServiceProviderClusterIdentityStatus} constructed wraps the SDK's
 * `log.debug` once, in that program, and drops those three lines when they name this resource
 * type and report no error. Every other debug line (other resource types, the stack, failed
 * registrations, the program's own) goes through as before. `ARO_HCP_SDK_DEBUG_LOGS=all` keeps
 * them all (read at every line, so a program can switch); `quiet`, the default, drops them.
 */
import * as sdkLog from "@pulumi/pulumi/log";

/** The variable that chooses; its values. */
export const sdkDebugLogsVariable = "ARO_HCP_SDK_DEBUG_LOGS";
export const sdkDebugLogsValues = ["quiet", "all"] as const;
export type SdkDebugLogs = (typeof sdkDebugLogsValues)[number];

/**
 * The choice in `environment`: `quiet` when unset or empty. Anything else is refused, naming the
 * variable and what it may be, before the resource is registered.
 */
export function sdkDebugLogsFrom(environment: NodeJS.ProcessEnv): SdkDebugLogs {
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

const wrapped = Symbol.for("aro-hcp-identity-status.sdkRegistrationDebugLogs");

/**
 * Wraps `logModule.debug` (the SDK's by default) once per module and type: lines that
 * {@link isSdkRegistrationLine} matches are dropped while {@link sdkDebugLogsFrom} says `quiet`.
 * Returns whether it wrapped now (false when already wrapped for this type).
 */
export function quietSdkRegistrationLines(typeToken: string, logModule: DebugLogModule = sdkLog, environment: NodeJS.ProcessEnv = process.env): boolean {
  const module = logModule as DebugLogModule & { [wrapped]?: Set<string> };
  const types = module[wrapped] ?? new Set<string>();
  if (types.has(typeToken)) {
    return false;
  }
  const inner = module.debug;
  module.debug = function debug(this: unknown, message: string, ...rest: never[]): Promise<void> {
    if (isSdkRegistrationLine(message, typeToken) && sdkDebugLogsIsQuiet(environment)) {
      return Promise.resolve();
    }
    return inner.call(this, message, ...rest);
  };
  types.add(typeToken);
  Object.defineProperty(module, wrapped, { value: types, configurable: true, enumerable: false });
  return true;
}

/**
 * An unreadable value counts as `all` here: a log line is no place to throw, and the constructor
 * ({@link sdkDebugLogsFrom}) refuses it before registering anything.
 */
function sdkDebugLogsIsQuiet(environment: NodeJS.ProcessEnv): boolean {
  try {
    return sdkDebugLogsFrom(environment) === "quiet";
  } catch {
    return false;
  }
}
