/**
 * The bad-input catalogue: malformed inputs, settings and documents, each run through the real
 * provider (check, then create with real clients) against the sandbox. Each must fail with a
 * message naming the field and what is wrong, and write nothing (the sandbox counts every Cosmos
 * write). A few inputs are accepted on purpose (casing, duplicates); the catalogue says so.
 */
import type { FleetClusterDescription } from "../../sandbox/seed";
import type { BadInput } from "./badInputs";
import { badInputs } from "./badInputs";
import { secretViolations } from "./invariants";
import type { ReliabilitySandbox } from "./reliabilitySandbox";
import { cosmosWrites, ownedStatus, readServiceProviderCluster, seedLanes } from "./reliabilitySandbox";

/** One catalogue row as the report shows it. */
export interface BadInputResult {
  readonly name: string;
  readonly stage: "check" | "create" | "configure";
  readonly message: string;
  readonly written: string;
  readonly problems: readonly string[];
}

/** Runs every catalogue entry; returns a row per entry. */
export async function runBadInputCatalogue(reliability: ReliabilitySandbox): Promise<BadInputResult[]> {
  const { sandbox } = reliability;
  const [cluster, spare] = seedLanes(sandbox, "bad-input", 2, 2) as [FleetClusterDescription, FleetClusterDescription];
  const results: BadInputResult[] = [];
  for (const entry of badInputs(reliability, cluster, spare)) {
    results.push(await runEntry(reliability, cluster, entry));
  }
  return results;
}

async function runEntry(reliability: ReliabilitySandbox, cluster: FleetClusterDescription, entry: BadInput): Promise<BadInputResult> {
  const { sandbox } = reliability;
  await entry.prepare?.();
  const writesBefore = cosmosWrites(sandbox);
  const statusBefore = ownedStatus(readServiceProviderCluster(sandbox, cluster));
  const provider = reliability.provider(entry.config ?? {});
  let message: string;
  let stage: BadInputResult["stage"] = "check";
  const checked = await provider.check!({} as never, entry.inputs as never);
  if (checked.failures !== undefined && checked.failures.length > 0) {
    message = checked.failures.map((failure) => `${failure.property}: ${failure.reason}`).join("; ");
  } else {
    stage = entry.config === undefined ? "create" : "configure";
    try {
      const created = await provider.create(checked.inputs as never);
      message = entry.accepted === undefined ? "(accepted)" : entry.accepted(created.outs as never, created.id);
    } catch (error) {
      message = error instanceof Error ? error.message : String(error);
    }
  }
  await entry.cleanUp?.();
  const writes = cosmosWrites(sandbox) - writesBefore;
  const problems: string[] = [];
  if (!entry.expect.test(message)) problems.push(`the message does not match ${String(entry.expect)}`);
  problems.push(...secretViolations("the message", message, reliability.secrets()));
  if (entry.accepted === undefined && writes > 0) problems.push(`${writes} Cosmos write(s)`);
  if (entry.accepted === undefined && JSON.stringify(ownedStatus(readServiceProviderCluster(sandbox, cluster))) !== JSON.stringify(statusBefore)) {
    problems.push("the status subtree changed");
  }
  return {
    name: entry.name,
    stage,
    message: message.replace(/\s*\n\s*/g, " "),
    written: entry.accepted === undefined ? (writes === 0 ? "none" : `${writes} write(s)`) : `accepted: ${writes} write(s)`,
    problems,
  };
}
