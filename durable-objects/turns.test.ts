import { describe, expect, it } from "vitest";
import { afterQueuedEvents, nextTask } from "./turns";

describe("turns", () => {
  it("afterQueuedEvents yields to the runtime's queue and resolves before any timer", async () => {
    const order: string[] = [];
    setTimeout(() => order.push("timer"), 0);
    void Promise.resolve().then(() => order.push("microtask"));
    await afterQueuedEvents();
    order.push("after");
    expect(order).toEqual(["microtask", "after"]);
  });

  it("nextTask waits for a timer", async () => {
    const order: string[] = [];
    setTimeout(() => order.push("timer"), 0);
    await nextTask();
    order.push("after");
    expect(order).toEqual(["timer", "after"]);
  });
});
