/** `node dist/cli/shardPlan.js <region clusters file> --shards <count> --out <directory>`: the package's `aro-hcp-shard-plan`, from this repository. */
import { shardPlanCommand } from "../resources/shards/writeShardPlan";

shardPlanCommand(process.argv.slice(2), "node dist/cli/shardPlan.js");
