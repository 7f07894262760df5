/**
 * The demo upstream for local use (`npm run upstream`): the fake domain API of the seed
 * examples (/facilities, /shipments, /contaminants, /inspections) on 127.0.0.1:8788,
 * which the `TOOLS` registry in wrangler.toml points at, plus the demo operations of
 * examples/deploy.json (test/upstream/demo-ops.ts) and the planner of examples/self-repairing.json
 * (test/upstream/planners.ts).
 * Set PORT to listen elsewhere.
 */
import { startUpstream } from "./server.ts";

const port = Number(process.env.PORT ?? 8788);
const upstream = await startUpstream(port);
console.log(`edgestep demo upstream listening on ${upstream.url}`);
console.log(`  GET ${upstream.url}/facilities?location=Berlin`);
console.log(`  GET ${upstream.url}/shipments?facility_id=F1,F3`);
console.log(`  GET ${upstream.url}/contaminants?shipment_ids=S1,S3`);
console.log(`  GET ${upstream.url}/inspections`);
console.log(`  POST ${upstream.url}/planner   (the planner of examples/self-repairing.json)`);

const stop = () => {
  void upstream.close().then(() => process.exit(0));
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
