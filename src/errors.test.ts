import { describe, expect, it } from "vitest";
import { UnavailableError, unavailableObject } from "./errors";

describe("unavailableObject: workerd's errors from a Durable Object call that a retry gets past", () => {
  it("an object that restarted mid-call is a retryable 503", () => {
    const reset = Object.assign(new Error("internal detail"), { durableObjectReset: true });
    const err = unavailableObject(reset);
    expect(err).toBeInstanceOf(UnavailableError);
    expect(err).toMatchObject({ status: 503, code: "unavailable", retryAfterSeconds: 1 });
    expect(err!.message).toBe(
      "the Durable Object serving this request restarted before it answered: send the request again",
    );
    expect(err!.cause).toBe(reset);
  });

  it("an overloaded object is a 503 too", () => {
    const err = unavailableObject(Object.assign(new Error("x"), { overloaded: true }));
    expect(err?.message).toBe(
      "the Durable Object serving this request is overloaded: retry shortly",
    );
  });

  it("a platform error marked retryable is a 503; one thrown by the object's own code is not", () => {
    const unreached = unavailableObject(Object.assign(new Error("x"), { retryable: true }));
    expect(unreached?.message).toBe(
      "the Durable Object serving this request could not be reached: send the request again",
    );
    const own = Object.assign(new Error("x"), { retryable: true, remote: true });
    expect(unavailableObject(own)).toBeUndefined();
  });

  it("anything else is left alone", () => {
    const others = [new Error("boom"), { durableObjectReset: "yes" }, { retryable: false }];
    for (const other of [...others, null, "text", 7])
      expect(unavailableObject(other)).toBeUndefined();
  });
});
