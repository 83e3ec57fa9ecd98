/** `node dist/cli/runReport.js <records file> [--json <report file>]`: the package's `aro-hcp-run-report`, from this repository. */
import { runReportCommand } from "../resources/report/runReport";

runReportCommand(process.argv.slice(2), "node dist/cli/runReport.js");
