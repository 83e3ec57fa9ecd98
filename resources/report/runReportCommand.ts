#!/usr/bin/env node
/** The package's `aro-hcp-run-report` command: the run report of a stack's records file, or of a region's shards (reportCommand.ts). */
import { runReportCommand } from "./reportCommand";

runReportCommand(process.argv.slice(2));
