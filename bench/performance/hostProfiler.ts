/**
 * Preloaded into the provider host by profileFleet.ts (`NODE_OPTIONS=--require …/hostProfiler.js`;
 * Node refuses `--cpu-prof` in NODE_OPTIONS). In a dynamic-provider host it starts the V8 CPU
 * profiler and the sampling heap profiler through the inspector, and writes
 * `<ARO_HCP_PROFILE_DIRECTORY>/host-<pid>.cpuprofile` and `.heapprofile` when the engine stops
 * the host (SIGINT or SIGTERM) or it exits. Any other process it is loaded into is left alone.
 */
import { writeFileSync } from "node:fs";
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
  session.post("HeapProfiler.startSampling", { samplingInterval: 64 * 1024 });
  let written = false;
  const write = (): void => {
    if (written) return;
    written = true;
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
