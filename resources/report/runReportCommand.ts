#!/usr/bin/env node
/** The package's `aro-hcp-run-report` command: the run report of a records file (runReport.ts). */
import { runReportCommand } from "./runReport";

runReportCommand(process.argv.slice(2));
