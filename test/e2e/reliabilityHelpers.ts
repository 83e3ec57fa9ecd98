/**
 * Loads the reliability scenarios (bench/reliability/) from the compiled output with Node's own
 * `require`, as `npm run reliability` runs them: the provider then loads its SDKs the way it does in
 * production. Compile first (`npm test` does).
 */
import { createRequire } from "node:module";
import { join, resolve } from "node:path";

const projectDirectory = resolve(__dirname, "..", "..");
const nativeRequire = createRequire(join(projectDirectory, "package.json"));

/** The compiled module `bench/reliability/<name>.js`. */
export function reliabilityModule<T>(name: string): T {
  return nativeRequire(join(projectDirectory, "dist", "bench", "reliability", `${name}.js`)) as T;
}

export type ReliabilitySandboxModule = typeof import("../../bench/reliability/reliabilitySandbox");
export type FaultCampaignModule = typeof import("../../bench/reliability/faultCampaign");
export type ConcurrentWritersModule = typeof import("../../bench/reliability/concurrentWriters");
export type BadInputCatalogueModule = typeof import("../../bench/reliability/badInputCatalogue");
export type EngineSampleModule = typeof import("../../bench/reliability/engineSample");
export type InterruptedScenarioModule = typeof import("../../bench/reliability/interruptedScenario");
