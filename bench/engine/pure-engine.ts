/**
 * The pure engine, as the benchmark drives it in Node. `bench/engine/harness.ts` bundles this file with
 * esbuild (src/ imports carry no `.ts` extensions, so Node cannot load it directly).
 */
export { beginIteration, createScheduler, decide, settle } from "../../src/engine/scheduler";
export { compilePlan } from "../../src/engine/validate";
export { passTool } from "../../src/tools/pass";
