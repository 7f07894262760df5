/**
 * When the run page stops following a run (console/src/run/run-state.ts): a webhook still
 * retrying after the end does not keep it live; the header reads its deliveries slowly.
 */
import { describe, expect, it } from "vitest";
import { settled, webhookPending } from "../console/src/run/run-state";
import type { RunStatus } from "../console/src/types";

type State = Pick<RunStatus, "status" | "rollback" | "webhook">;
const webhook = (state: "pending" | "delivered" | "failed") =>
  ({ url: "https://hooks.example/x", state, deliveries: [] }) as unknown as RunStatus["webhook"];
const rollback = (state: string) => ({ state, steps: [] }) as unknown as RunStatus["rollback"];

describe("settled", () => {
  it("is true once the run is final, its webhook still retrying or not", () => {
    expect(settled({ status: "completed", webhook: webhook("pending") } as State)).toBe(true);
    expect(settled({ status: "completed", webhook: webhook("failed") } as State)).toBe(true);
    expect(settled({ status: "completed" } as State)).toBe(true);
  });

  it("is false while the run goes on or its rollback runs", () => {
    expect(settled({ status: "running" } as State)).toBe(false);
    expect(settled({ status: "waiting", webhook: webhook("delivered") } as State)).toBe(false);
    expect(settled({ status: "failed", rollback: rollback("running") } as State)).toBe(false);
    expect(settled({ status: "failed", rollback: rollback("completed") } as State)).toBe(true);
  });
});

describe("webhookPending", () => {
  it("is true only for a settled run whose webhook has deliveries to come", () => {
    expect(webhookPending({ status: "completed", webhook: webhook("pending") } as State)).toBe(
      true,
    );
    expect(webhookPending({ status: "completed", webhook: webhook("failed") } as State)).toBe(
      false,
    );
    expect(webhookPending({ status: "running", webhook: webhook("pending") } as State)).toBe(false);
  });
});
