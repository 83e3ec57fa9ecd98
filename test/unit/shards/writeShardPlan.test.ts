/**
 * The shard plan command (resources/shards/writeShardPlan.ts) and the plan file it writes
 * (resources/shards/shardPlanFile.ts): the files written, read back.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { defaultMaxShardClusters, fewestShardsWithin, planShards, shardIndexOf } from "../../../resources/shards/shardPlan";
import { parseShardPlanFile, readShardPlanFile } from "../../../resources/shards/shardPlanFile";
import { parseShardPlanArguments, shardPlanCommand, writeShardPlan } from "../../../resources/shards/writeShardPlan";

const clusterId = (index: number): string =>
  `/subscriptions/00000000-0000-0000-0000-00000000000${index % 4}/resourceGroups/rg-${index}/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/cluster-${index}`;
const region = Array.from({ length: 30 }, (_, index) => ({
  clusterResourceId: clusterId(index),
  ...(index % 3 === 0 ? { dataPlaneOperators: { "disk-csi-driver": `${clusterId(index)}-disk` } } : {}),
}));

let directory: string;
let clustersFile: string;
let outputDirectory: string;

beforeEach(() => {
  directory = mkdtempSync(join(tmpdir(), "shard-plan-"));
  clustersFile = join(directory, "region.json");
  outputDirectory = join(directory, "shards");
  writeFileSync(clustersFile, JSON.stringify(region));
});

afterEach(() => {
  rmSync(directory, { recursive: true, force: true });
});

const readJson = (file: string): unknown => JSON.parse(readFileSync(file, "utf8"));

describe("writeShardPlan", () => {
  it("writes each shard's clusters file and the plan file naming them, and every cluster is in the shard of its hash", () => {
    const written = writeShardPlan({ clustersFile, shardCount: 4, outputDirectory });
    expect(readdirSync(outputDirectory).sort()).toEqual(["shard-0.json", "shard-1.json", "shard-2.json", "shard-3.json", "shard-plan.json"]);
    const plan = readShardPlanFile(join(outputDirectory, "shard-plan.json"));
    expect(plan).toEqual(written.plan);
    expect(plan).toMatchObject({ schemaVersion: 1, shardCount: 4, clusters: 30 });
    const shards = plan.shards.map((shard) => readJson(join(outputDirectory, shard.clustersFile)) as typeof region);
    expect(shards.map((shard) => shard.length)).toEqual(plan.shards.map((shard) => shard.clusters));
    expect(shards.flat().sort((left, right) => left.clusterResourceId.localeCompare(right.clusterResourceId))).toEqual(
      [...region].sort((left, right) => left.clusterResourceId.localeCompare(right.clusterResourceId)),
    );
    shards.forEach((shard, index) => {
      for (const cluster of shard) expect(shardIndexOf(cluster.clusterResourceId, 4)).toBe(index);
    });
  });

  it("writes the same plan again for the same clusters in another order", () => {
    const first = writeShardPlan({ clustersFile, shardCount: 4, outputDirectory }).plan;
    writeFileSync(clustersFile, JSON.stringify([...region].reverse()));
    expect(writeShardPlan({ clustersFile, shardCount: 4, outputDirectory }).plan).toEqual(first);
  });

  it("removes the shard files of an earlier plan with more shards, and only those", () => {
    writeShardPlan({ clustersFile, shardCount: 12, outputDirectory });
    writeFileSync(join(outputDirectory, "notes.json"), "{}");
    const written = writeShardPlan({ clustersFile, shardCount: 3, outputDirectory });
    expect(written.removed).toEqual(Array.from({ length: 9 }, (_, index) => `shard-${index + 3}.json`));
    expect(readdirSync(outputDirectory).sort()).toEqual(["notes.json", "shard-0.json", "shard-1.json", "shard-2.json", "shard-plan.json"]);
  });

  it.each([
    ["a clusters file that does not exist", () => rmSync(clustersFile), (file: string) => `clusters file ${file} does not exist`],
    ["a clusters file that is not JSON", () => writeFileSync(clustersFile, "[{"), (file: string) => `clusters file ${file} is not valid JSON`],
    [
      "an empty region",
      () => writeFileSync(clustersFile, "[]"),
      (file: string) => `clusters file ${file} lists no clusters: a plan of an empty region would have every shard let go of its clusters`,
    ],
  ])("refuses %s, naming the file, and writes nothing", (_, arrange, message) => {
    arrange();
    expect(() => writeShardPlan({ clustersFile, shardCount: 4, outputDirectory })).toThrow(message(clustersFile));
    expect(existsSync(outputDirectory)).toBe(false);
  });

  it("refuses to write a shard file over the region's clusters file", () => {
    mkdirSync(outputDirectory);
    const inside = join(outputDirectory, "shard-1.json");
    writeFileSync(inside, JSON.stringify(region));
    expect(() => writeShardPlan({ clustersFile: inside, shardCount: 4, outputDirectory })).toThrow(
      `clusters file ${inside} is where the plan writes a file of its own: give another --out directory`,
    );
    expect(readJson(inside)).toEqual(region);
  });
});

describe("parseShardPlanFile", () => {
  const valid = {
    schemaVersion: 1,
    planId: "0123456789abcdef",
    shardCount: 2,
    clusters: 3,
    shards: [0, 1].map((index) => ({ index, clustersFile: `shard-${index}.json`, clusters: index + 1 })),
  };

  it("reads a plan file as written", () => {
    expect(parseShardPlanFile(valid, "plan.json")).toEqual(valid);
  });

  it.each([
    ["schemaVersion", { ...valid, schemaVersion: 2 }, "plan.json: schemaVersion must be 1, got 2"],
    ["planId", { ...valid, planId: "" }, 'plan.json: planId must be a non-empty string, got ""'],
    ["shardCount", { ...valid, shardCount: 0 }, "plan.json: shardCount must be a whole number of at least 1, got 0"],
    ["shards", { ...valid, shardCount: 3 }, "plan.json: shards must be a list of 3 shards (shardCount), got"],
    ["shards[1].index", { ...valid, shards: [valid.shards[0], { ...valid.shards[1], index: 0 }] }, "plan.json: shards[1].index must be 1, got 0"],
    [
      "shards[0].clusters",
      { ...valid, shards: [{ ...valid.shards[0], clusters: "1" }, valid.shards[1]] },
      'plan.json: shards[0].clusters must be a whole number, got "1"',
    ],
    ["clusters", { ...valid, clusters: 4 }, "plan.json: clusters must be the sum of the shards' clusters (3), got 4"],
  ])("names %s when it is wrong", (_, value, message) => {
    expect(() => parseShardPlanFile(value, "plan.json")).toThrow(message);
  });

  it("names a plan file that does not exist", () => {
    expect(() => readShardPlanFile(join(directory, "shard-plan.json"))).toThrow(
      `shard plan file ${join(directory, "shard-plan.json")} does not exist (aro-hcp-shard-plan writes it)`,
    );
  });
});

describe("the shard count from the most clusters a shard should hold", () => {
  it("is the fewest shards whose largest holds at most that many, by the plan's own hash", () => {
    const ids = Array.from({ length: 1000 }, (_, index) => clusterId(index));
    const clusters = ids.map((clusterResourceId) => ({ clusterResourceId }));
    const largest = (shards: number): number => Math.max(...planShards(clusters, shards).shards.map((shard) => shard.length));
    const counts = [1000, 400, 250, 100].map((most) => {
      const count = fewestShardsWithin(ids, most);
      expect(largest(count), `${most} at ${count} shards`).toBeLessThanOrEqual(most);
      // Fewer cannot fit: below the even split by counting, from it up by the hash's spread.
      for (let fewer = Math.ceil(ids.length / most); fewer < count; fewer += 1) expect(largest(fewer), `${most} at ${fewer} shards`).toBeGreaterThan(most);
      return count;
    });
    // The hash's spread costs shards beyond the even split at 100 a shard (10), none at 1,000.
    expect(counts[0]).toBe(1);
    expect(counts[3]).toBeGreaterThan(10);
    expect(() => fewestShardsWithin(ids, 0)).toThrow(/whole number of at least 1, got 0/);
    expect(() => fewestShardsWithin(ids, 1)).toThrow(/no plan of 1000 to 2000 shards keeps each of 1000 clusters' shards within 1/);
  });

  it("plans that many when no count is given, and warns naming the shards over it when the given count leaves some", () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => undefined);
    const error = vi.spyOn(console, "error").mockImplementation(() => undefined);
    const exitCode = process.exitCode;
    try {
      const fewest = fewestShardsWithin(
        region.map((cluster) => cluster.clusterResourceId),
        8,
      );
      shardPlanCommand([clustersFile, "--max-shard-clusters", "8", "--out", outputDirectory]);
      const picked = readShardPlanFile(join(outputDirectory, "shard-plan.json"));
      expect(picked.shardCount).toBe(fewest);
      expect(Math.max(...picked.shards.map((shard) => shard.clusters))).toBeLessThanOrEqual(8);
      expect(log.mock.calls[1]).toEqual([
        `${fewest} shards: the fewest whose largest holds at most 8 clusters. Pass --shards ${fewest} when you plan again: a new count moves most clusters (docs/operations.md, section 4)`,
      ]);
      expect(error).not.toHaveBeenCalled();

      shardPlanCommand([clustersFile, "--shards", "2", "--max-shard-clusters", "8", "--out", outputDirectory]);
      const asked = readShardPlanFile(join(outputDirectory, "shard-plan.json"));
      expect(asked.shardCount).toBe(2);
      expect(error.mock.calls).toHaveLength(1);
      const [warning] = error.mock.calls[0] as [string];
      for (const shard of asked.shards) expect(warning.includes(`shard ${shard.index} holds ${shard.clusters}`)).toBe(shard.clusters > 8);
      expect(warning).toContain(`--shards ${fewest} is the fewest that fits`);
      expect(process.exitCode).toBe(exitCode);

      // The default holds far more than this region: one shard, no warning.
      error.mockClear();
      expect(writeShardPlan({ clustersFile, outputDirectory }).plan.shardCount).toBe(fewestShardsWithin([clusterId(0)], defaultMaxShardClusters));
      shardPlanCommand([clustersFile, "--shards", "1", "--out", outputDirectory]);
      expect(error).not.toHaveBeenCalled();
    } finally {
      process.exitCode = exitCode;
      log.mockRestore();
      error.mockRestore();
    }
  });
});

describe("the shard plan command", () => {
  it.each([
    [["region.json", "--shards", "4", "--out", "out"], { clustersFile: "region.json", shardCount: 4, outputDirectory: "out" }],
    [["--out", "out", "--shards", "12", "region.json"], { clustersFile: "region.json", shardCount: 12, outputDirectory: "out" }],
    [["region.json", "--shards", "0", "--out", "out"], { usageError: "--shards must be a whole number of at least 1, got 0" }],
    [["region.json", "--shards", "four", "--out", "out"], { usageError: "--shards must be a whole number of at least 1, got four" }],
    [["region.json", "--shards", "4"], { usageError: "--out <directory> is required (where the shard files and shard-plan.json go)" }],
    [["region.json", "--shards", "--out", "out"], { usageError: "--shards needs a value" }],
    [["a.json", "b.json", "--shards", "4", "--out", "out"], { usageError: "give one region clusters file, got 2" }],
    [["region.json", "--shard", "4", "--out", "out"], { usageError: "unknown option --shard" }],
    [["region.json", "--out", "out"], { clustersFile: "region.json", outputDirectory: "out" }],
    [["region.json", "--max-shard-clusters", "1500", "--out", "out"], { clustersFile: "region.json", maxShardClusters: 1500, outputDirectory: "out" }],
    [["region.json", "--max-shard-clusters", "0", "--out", "out"], { usageError: "--max-shard-clusters must be a whole number of at least 1, got 0" }],
  ])("reads %j", (argumentsList, expected) => {
    expect(parseShardPlanArguments(argumentsList)).toEqual(expected);
  });

  it("prints the plan it wrote, and exits 1 naming a bad input file", () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => undefined);
    const error = vi.spyOn(console, "error").mockImplementation(() => undefined);
    const exitCode = process.exitCode;
    try {
      shardPlanCommand([clustersFile, "--shards", "2", "--out", outputDirectory]);
      const plan = readShardPlanFile(join(outputDirectory, "shard-plan.json"));
      expect(log.mock.calls).toEqual([
        [
          `Shard plan ${plan.planId}: 30 clusters in 2 shards (${plan.shards[0].clusters}, ${plan.shards[1].clusters}); wrote ${join(outputDirectory, "shard-plan.json")} and its shard files`,
        ],
      ]);
      expect(process.exitCode).toBe(exitCode);
      shardPlanCommand([join(directory, "absent.json"), "--shards", "2", "--out", outputDirectory]);
      expect(error.mock.calls).toEqual([[`clusters file ${join(directory, "absent.json")} does not exist`]]);
      expect(process.exitCode).toBe(1);
    } finally {
      process.exitCode = exitCode;
      log.mockRestore();
      error.mockRestore();
    }
  });
});
