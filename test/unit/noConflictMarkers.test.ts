/**
 * tools/no-conflict-markers.sh, the lint step's check for a merge's conflict markers: docs/testing.md
 * once kept a half-resolved merge that Prettier and every test passed. The script runs in a
 * repository of its own here (it checks the repository it sits in), over tracked files.
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";

const script = join(__dirname, "..", "..", "tools", "no-conflict-markers.sh");
let repository: string | undefined;

function repositoryWith(files: Record<string, string>): string {
  repository = mkdtempSync(join(tmpdir(), "conflict-markers-"));
  mkdirSync(join(repository, "tools"));
  copyFileSync(script, join(repository, "tools", "no-conflict-markers.sh"));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(repository, name), text);
  const git = spawnSync("git", ["init", "-q"], { cwd: repository });
  expect(git.status).toBe(0);
  expect(spawnSync("git", ["add", "."], { cwd: repository }).status).toBe(0);
  return repository;
}

function check(directory: string): { status: number | null; output: string } {
  const run = spawnSync("bash", [join(directory, "tools", "no-conflict-markers.sh")], { encoding: "utf8" });
  return { status: run.status, output: run.stdout + run.stderr };
}

afterEach(() => {
  if (repository !== undefined) rmSync(repository, { recursive: true, force: true });
  repository = undefined;
});

describe("tools/no-conflict-markers.sh", () => {
  it("fails naming the file and line of a merge's markers left in a tracked Markdown file", () => {
    const directory = repositoryWith({ "testing.md": "| a |\n<<<<<<< HEAD\n| b |\n=======\n| c |\n>>>>>>> region-engines\n" });
    const { status, output } = check(directory);
    expect(status).toBe(1);
    expect(output).toContain("testing.md:2:<<<<<<< HEAD");
    expect(output).toContain("testing.md:6:>>>>>>> region-engines");
    expect(output).toContain("conflict markers");
  });

  it("passes a tree without them, including lines that only look alike", () => {
    const directory = repositoryWith({ "notes.md": "a heading\n=======\n\n<<<<<<<x not a marker\n", "code.ts": 'const arrow = "<<<<<<< HEAD";\n' });
    expect(check(directory)).toEqual({ status: 0, output: "" });
  });
});
