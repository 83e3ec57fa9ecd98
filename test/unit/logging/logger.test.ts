import { AzureLogger, setLogLevel } from "@azure/logger";
import { afterEach, describe, expect, it } from "vitest";
import { log } from "../../../resources/logging/logger";

const captured: string[] = [];
const originalLog = AzureLogger.log;

afterEach(() => {
  AzureLogger.log = originalLog;
  setLogLevel(undefined);
  captured.length = 0;
});

function capture(level: "info" | "warning" | "verbose" | "error"): void {
  setLogLevel(level);
  AzureLogger.log = (...parts: unknown[]) => {
    captured.push(parts.map(String).join(" "));
  };
}

describe("log", () => {
  it("writes one line naming the operation and the subject under the hook's namespace", () => {
    capture("info");
    log("info", "wait", "7de6e0ae-f384-51a8-97e2-1177ac229b7c", "ServiceProviderCluster document does not exist yet");
    expect(captured).toHaveLength(1);
    expect(captured[0]).toContain("aro-hcp-identity-status:info");
    expect(captured[0]).toContain("wait 7de6e0ae-f384-51a8-97e2-1177ac229b7c => ServiceProviderCluster document does not exist yet");
  });

  it("writes nothing below the configured level", () => {
    capture("warning");
    log("info", "write", "document", "status written");
    log("warning", "write", "document", "HTTP 412");
    expect(captured).toHaveLength(1);
    expect(captured[0]).toContain("write document => HTTP 412");
  });
});
