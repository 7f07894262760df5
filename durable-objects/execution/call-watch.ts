/**
 * The calls this instance has in flight (every tool call goes through `callTool`), for the
 * watchdog (src/engine/call-watch.ts): the alarm asks it whether one was lost.
 */
import type { CallInFlight } from "../../src/engine/call-watch";

export class CallWatch {
  private readonly calls = new Set<CallInFlight>();

  /** Watches `call` until `result` settles (it never rejects: callTool turns errors into results). */
  track(call: CallInFlight, result: Promise<unknown>): void {
    this.calls.add(call);
    const done = () => void this.calls.delete(call);
    result.then(done, done);
  }

  inFlight(): Iterable<CallInFlight> {
    return this.calls;
  }
}
