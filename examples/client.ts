// The typed client in a few lines (README, "The TypeScript client"): submit a plan safely,
// follow its events live, then read the outcome. Run it against a Worker:
//   EDGESTEP_URL=http://127.0.0.1:8787 npx node examples/client.ts
import { EdgestepApiError, EdgestepClient, type Plan } from "edgestep/client";

const client = new EdgestepClient({
  url: process.env.EDGESTEP_URL ?? "http://127.0.0.1:8787",
  ...(process.env.EDGESTEP_API_KEY && { apiKey: process.env.EDGESTEP_API_KEY }),
});

const plan: Plan = {
  name: "client-example",
  input: { city: "Berlin" },
  steps: [
    { id: "greet", tool: "pass", params: { value: "hello ${input.city}" } },
    { id: "shout", tool: "pass", params: { value: ["${steps.greet.data}", "!"] } },
  ],
};

try {
  // An Idempotency-Key is generated and reused on retries: the plan runs once.
  const { runId } = await client.submitRun(plan);
  for await (const event of client.events(runId)) {
    console.log(event.seq, event.type, event.stepId ?? "");
  }
  const run = await client.getRun(runId);
  const results = await client.getResults(runId);
  console.log(run.status, JSON.stringify(results.at(-1)?.data));
} catch (err) {
  if (!(err instanceof EdgestepApiError)) throw err;
  console.error(err.code, err.status, err.message, err.issues);
  process.exitCode = 1;
}
