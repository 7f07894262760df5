/**
 * Before each test file (vitest.config.ts `setupFiles`): the Worker's first requests boot it and
 * a run's object (module loading, the first SQLite database), seconds on a busy machine. Made
 * here, once per workerd, so that no test's own time pays for them; later files find it warm.
 * Booting is work, not a wait on anything a test does: on a loaded machine (two suites at once,
 * their files starting processes and browsers) it took 4.7–10 s, hence its own budget.
 */
import { exports } from "cloudflare:workers";
import { beforeAll } from "vitest";

beforeAll(async () => {
  for (const path of ["/healthz", "/v1/runs/run_00000000000000000000000000000000"])
    await (await exports.default.fetch(new Request(`http://edgestep.test${path}`))).arrayBuffer();
}, 60_000);
