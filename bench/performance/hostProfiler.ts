/**
 * Preloaded into the provider host by profileFleet.ts (`NODE_OPTIONS=--require …/hostProfiler.js`;
 * Node refuses `--cpu-prof` in NODE_OPTIONS). In a dynamic-provider host it starts the V8 CPU
 * profiler and the sampling heap profiler through the inspector, and writes
 * `<ARO_HCP_PROFILE_DIRECTORY>/host-<pid>.cpuprofile` and `.heapprofile` when the engine stops
 * the host (SIGINT or SIGTERM) or it exits, with `.memory.json`: V8's heap spaces (used and
 * committed), external memory and array buffers at the sample of highest resident size (sampled
 * every 50 ms), to tell live objects from garbage not yet collected at the peak; each second's
 * resident size and old-space use; and the time of every full (mark-compact) collection with the
 * heap in use after it, to tell how fast the old space fills and how often V8 empties it, and each
 * kind of collection's count and milliseconds (`collections`, by perf_hooks' NODE_PERFORMANCE_GC_*
 * number). Any other process it is loaded into is left alone.
 */
import { writeFileSync } from "node:fs";
import { getHeapSpaceStatistics } from "node:v8";
import { PerformanceObserver, constants } from "node:perf_hooks";
import { Session } from "node:inspector";
import { join } from "node:path";

const directory = process.env.ARO_HCP_PROFILE_DIRECTORY;
if (directory !== undefined && (process.argv[1] ?? "").includes("dynamic-provider")) {
  const session = new Session();
  session.connect();
  session.post("Profiler.enable");
  session.post("Profiler.setSamplingInterval", { interval: 1000 });
  session.post("Profiler.start");
  session.post("HeapProfiler.enable");
  // ARO_HCP_PROFILE_PROMOTED=1 also samples what full collections freed: objects promoted out of the
  // young generation that then died (V8's protocol has the option; Node's types do not list it).
  const sampling = { samplingInterval: 64 * 1024, includeObjectsCollectedByMajorGC: process.env.ARO_HCP_PROFILE_PROMOTED === "1" };
  session.post("HeapProfiler.startSampling", sampling);
  let peak: { rssBytes: number; atMs: number; memory: NodeJS.MemoryUsage; spaces: ReturnType<typeof getHeapSpaceStatistics> } | undefined;
  const started = Date.now();
  setInterval(() => {
    const memory = process.memoryUsage();
    if (peak === undefined || memory.rss > peak.rssBytes) peak = { rssBytes: memory.rss, atMs: Date.now() - started, memory, spaces: getHeapSpaceStatistics() };
  }, 50).unref();
  // [seconds into the host's life, resident MB, old-space MB in use]
  const timeline: [number, number, number][] = [];
  setInterval(() => {
    const oldSpace = getHeapSpaceStatistics().find((space) => space.space_name === "old_space");
    timeline.push([
      Math.round((Date.now() - started) / 1000),
      Math.round(process.memoryUsage().rss / 2 ** 20),
      Math.round((oldSpace?.space_used_size ?? 0) / 2 ** 20),
    ]);
  }, 1000).unref();
  // [milliseconds into the host's life, heap MB in use after the collection]
  const fullCollections: [number, number][] = [];
  // Every collection by kind: [count, milliseconds].
  const collections: Record<string, [number, number]> = {};
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const kind = String((entry as { detail?: { kind?: number } }).detail?.kind);
      const [count, duration] = collections[kind] ?? [0, 0];
      collections[kind] = [count + 1, duration + entry.duration];
      if ((entry as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) {
        fullCollections.push([Math.round(Date.now() - started), Math.round(process.memoryUsage().heapUsed / 2 ** 20)]);
      }
    }
  }).observe({ entryTypes: ["gc"] });
  let written = false;
  const write = (): void => {
    if (written) return;
    written = true;
    writeFileSync(join(directory, `host-${process.pid}.memory.json`), JSON.stringify({ peak: peak ?? null, timeline, fullCollections, collections }));
    // The same-thread session answers synchronously, so this works inside an exit handler.
    session.post("Profiler.stop", (error, result) => {
      if (error === null) writeFileSync(join(directory, `host-${process.pid}.cpuprofile`), JSON.stringify(result.profile));
    });
    session.post("HeapProfiler.stopSampling", (error, result) => {
      if (error === null) writeFileSync(join(directory, `host-${process.pid}.heapprofile`), JSON.stringify(result.profile));
    });
  };
  process.on("exit", write);
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.on(signal, () => {
      write();
      process.exit(0);
    });
  }
}
