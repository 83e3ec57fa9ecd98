/**
 * Settings wrong for the whole fleet, found without a request: `check` runs this for the first
 * resource and the engine stops at the first failed check, so a misconfiguration is reported once.
 * Beyond readSettings: the files the settings name (the CA bundle, the certificate bundle parsed as
 * the credential parses it) and the host's heap growth.
 */
import { readFileSync } from "node:fs";
import { CertificateBundleError, parseCertificateBundle } from "../azure/certificateBundle";
import { fileUnreadableReason } from "../azure/certificateCredential";
import type { ConfigSource, Settings } from "../core/settings";
import { SettingsError, readSettings } from "../core/settings";
import type { Environment } from "../core/settingsKeys";
import { keys, problemList, settingName } from "../core/settingsKeys";
import { heapGrowthPercent } from "./hostHeap";

/** The one message for settings that cannot work, or undefined when they can. Reads files; no request. */
export function fleetSettingsProblem(config: ConfigSource | undefined, environment: Environment): string | undefined {
  const heapGrowth = heapGrowthPercent(environment);
  const problems: string[] = typeof heapGrowth === "number" ? [] : [heapGrowth.problem];
  let settings: Settings;
  try {
    settings = readSettings(config, environment);
  } catch (error) {
    if (!(error instanceof SettingsError)) throw error;
    return settingsMessage([...error.problems, ...problems]);
  }
  if (settings.tlsCaFile !== undefined) {
    const setting = settingName(keys.tlsCaFile);
    const text = readable(settings.tlsCaFile, setting, problems);
    if (text !== undefined && !text.toString("latin1").includes("-----BEGIN CERTIFICATE-----")) {
      problems.push(`${setting} names ${settings.tlsCaFile}, which holds no PEM certificate; expected the CA bundle to trust`);
    }
  }
  // The chosen mode's certificate: readSettings refuses the keys of the other mode.
  const certificate = settings.firstParty ?? settings.fixedIdentity;
  if (certificate !== undefined) {
    const bytes = readable(certificate.certificateFile, certificate.certificateFileSetting, problems);
    if (bytes !== undefined) {
      try {
        parseCertificateBundle(bytes, `${certificate.certificateFileSetting} names ${certificate.certificateFile}, which`);
      } catch (error) {
        if (!(error instanceof CertificateBundleError)) throw error;
        problems.push(error.message.replace(/, which: /, ", which is unusable: "));
      }
    }
  }
  return problems.length === 0 ? undefined : settingsMessage(problems);
}

function readable(path: string, setting: string, problems: string[]): Buffer | undefined {
  try {
    return readFileSync(path);
  } catch (error) {
    problems.push(`${setting} names ${path}, which ${fileUnreadableReason(error)}`);
    return undefined;
  }
}

function settingsMessage(problems: readonly string[]): string {
  return `${problemList(problems)}\nNothing was read or written for any cluster: fix the setting and run again.`;
}
