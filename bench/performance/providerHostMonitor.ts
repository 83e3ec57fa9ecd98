/**
 * Finds the dynamic-provider host the engine starts for a run (the `node …/@pulumi/pulumi/cmd/
 * dynamic-provider/index.js` process below this process) and samples its peak resident memory
 * from /proc. Only descendants of this process are considered: other people's tests may run
 * provider hosts on the same machine at the same time.
 */
import { readdirSync, readFileSync } from "node:fs";

const hostMarker = "@pulumi/pulumi/cmd/dynamic-provider";

/** What the monitor saw of the provider hosts started during a run. */
export interface ProviderHostObservation {
  /** Hosts seen (one per engine run is expected: every resource shares it). */
  readonly hostProcessIds: readonly number[];
  /** Highest VmHWM (peak resident set) of any host, in bytes; 0 when none was seen. */
  readonly peakResidentBytes: number;
  /** CPU time (user + system) of the hosts, in milliseconds, as last sampled. */
  readonly hostCpuTimeInMs: number;
  /** CPU time of the engine (`pulumi` processes below this one), in milliseconds, as last sampled. */
  readonly engineCpuTimeInMs: number;
}

function readProcessFile(processId: number, name: string): string | undefined {
  try {
    return readFileSync(`/proc/${processId}/${name}`, "utf8");
  } catch {
    return undefined;
  }
}

/**
 * Every descendant of `ancestorId`, walking /proc/<pid>/task/<tid>/children down from it: only
 * this process's tree is read, not every process on a machine shared with other people's tests
 * (scanning all of /proc every tick cost the benchmark process seconds of CPU per run).
 */
export function descendantsOf(ancestorId: number): number[] {
  const found: number[] = [];
  const queue = [ancestorId];
  while (queue.length > 0) {
    const processId = queue.shift()!;
    let threads: string[];
    try {
      threads = readdirSync(`/proc/${processId}/task`);
    } catch {
      continue;
    }
    for (const thread of threads) {
      for (const child of (readProcessFile(processId, `task/${thread}/children`) ?? "").split(" ")) {
        if (child.length > 0 && !found.includes(Number(child))) {
          found.push(Number(child));
          queue.push(Number(child));
        }
      }
    }
  }
  return found;
}

/** User + system CPU time of a process in milliseconds, or undefined when it is gone. */
export function cpuTimeInMs(processId: number): number | undefined {
  const stat = readProcessFile(processId, "stat");
  if (stat === undefined) {
    return undefined;
  }
  // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticksPerSecond = 100;
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / ticksPerSecond;
}

/**
 * CPU time of this process's finished children and their finished descendants (cutime + cstime of
 * /proc/self/stat), in milliseconds: after an engine exits, its own CPU and its provider host's.
 */
export function finishedChildrenCpuTimeInMs(): number {
  const stat = readProcessFile(process.pid, "stat") ?? "";
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return ((Number(fields[13]) + Number(fields[14])) * 1000) / 100;
}

/** Engine processes (`pulumi`) below `ancestorId`. */
export function findEngineProcesses(ancestorId: number = process.pid): number[] {
  return descendantsOf(ancestorId).filter((processId) => readProcessFile(processId, "comm")?.trim() === "pulumi");
}

/** Provider host processes below `ancestorId`. */
export function findProviderHosts(ancestorId: number = process.pid): number[] {
  return descendantsOf(ancestorId).filter((processId) => {
    // argv[1] is the host script; this skips the shim's short `node -e` that resolves its path.
    const script = readProcessFile(processId, "cmdline")?.split("\0")[1] ?? "";
    return script.includes(hostMarker) && script.endsWith(".js");
  });
}

/** Peak resident set (VmHWM) of a process in bytes, or undefined when it is gone. */
export function peakResidentBytes(processId: number): number | undefined {
  const status = readProcessFile(processId, "status");
  const match = status === undefined ? null : /^VmHWM:\s+(\d+)\s+kB/m.exec(status);
  return match === null ? undefined : Number(match[1]) * 1024;
}

/**
 * Samples provider hosts every `intervalInMs` until stopped. VmHWM only grows, so the last
 * sample before the host exits is its peak (to within one interval of growth).
 */
export function monitorProviderHosts(intervalInMs = 50): { stop(): ProviderHostObservation } {
  const peaks = new Map<number, number>();
  const hostCpu = new Map<number, number>();
  const engineCpu = new Map<number, number>();
  const sampleKnown = (): void => {
    for (const host of peaks.keys()) {
      const peak = peakResidentBytes(host);
      const cpu = cpuTimeInMs(host);
      if (peak !== undefined) peaks.set(host, Math.max(peaks.get(host) ?? 0, peak));
      if (cpu !== undefined) hostCpu.set(host, cpu);
    }
    for (const engine of engineCpu.keys()) {
      const cpu = cpuTimeInMs(engine);
      if (cpu !== undefined) engineCpu.set(engine, cpu);
    }
  };
  const discover = (): void => {
    for (const host of findProviderHosts()) if (!peaks.has(host)) peaks.set(host, 0);
    for (const engine of findEngineProcesses()) if (!engineCpu.has(engine)) engineCpu.set(engine, 0);
    sampleKnown();
  };
  // Known processes are re-read on every tick; this process's tree is walked for new ones every fourth tick.
  let ticks = 0;
  const timer = setInterval(() => {
    ticks += 1;
    if (ticks % 4 === 0 || peaks.size === 0) {
      discover();
    } else {
      sampleKnown();
    }
  }, intervalInMs);
  const sum = (values: Iterable<number>): number => [...values].reduce((total, value) => total + value, 0);
  return {
    stop() {
      clearInterval(timer);
      sampleKnown();
      return {
        hostProcessIds: [...peaks.keys()],
        peakResidentBytes: Math.max(0, ...peaks.values()),
        hostCpuTimeInMs: sum(hostCpu.values()),
        engineCpuTimeInMs: sum(engineCpu.values()),
      };
    },
  };
}
