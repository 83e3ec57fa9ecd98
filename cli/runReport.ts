/** `node dist/cli/runReport.js <records file> [--json <report file>]` (or `--plan <shard-plan.json> <records>…`): the package's `aro-hcp-run-report`, from this repository. */
import { runReportCommand } from "../resources/report/reportCommand";

runReportCommand(process.argv.slice(2), "node dist/cli/runReport.js");
