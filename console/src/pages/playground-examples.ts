/** Plans the playground can load: the repository's examples, bundled at build time. */
import deploy from "../../../examples/deploy.json";
import mixed from "../../../examples/05-mixed.json";
import partialFailure from "../../../examples/partial-failure.json";
import chain from "../../../examples/04-three-level-chain.json";

/** Runs anywhere (no upstream needed): a fan-out, a durable wait and a join. */
const local = {
  name: "local-fan-out",
  input: { regions: ["eu", "us", "ap"] },
  steps: [
    { id: "plan", tool: "pass", params: { value: { regions: "${input.regions}" } } },
    {
      id: "each-region",
      tool: "pass",
      forEach: "${steps.plan.data.regions}",
      params: { value: { region: "${item}", n: "${index}" } },
    },
    { id: "settle", tool: "wait", params: { ms: 1500 }, dependsOn: ["plan"] },
    {
      id: "report",
      tool: "pass",
      dependsOn: ["settle"],
      params: { value: "${steps.each-region.data.*.region}" },
    },
  ],
};

export const EXAMPLES: Record<string, unknown> = {
  "local fan-out (runs anywhere)": local,
  "deploy (examples/deploy.json)": deploy,
  "three-level chain (examples/04)": chain,
  "mixed (examples/05)": mixed,
  "partial failure (examples/partial-failure.json)": partialFailure,
};
