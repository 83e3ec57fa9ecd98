#!/usr/bin/env node
/** The package's `aro-hcp-shard-plan` command: a region's clusters split into shards (writeShardPlan.ts). */
import { shardPlanCommand } from "./writeShardPlan";

shardPlanCommand(process.argv.slice(2));
