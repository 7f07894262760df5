/** FlowTable (owns `flow`): the destination's key, token bucket and pause, in one row. */
import type { FlowState } from "../../../src/engine/flow-control";
import type { Sql } from "../sql";

export class FlowTable {
  constructor(private readonly db: Sql) {}

  /** The stored bucket and pause, with the key they belong to; undefined before the first write. */
  read(): (Omit<FlowState, "inFlight"> & { destination: string }) | undefined {
    return this.db.one<Omit<FlowState, "inFlight"> & { destination: string }>`SELECT destination,
      tokens, refilled_at AS refilledAt, paused_until AS pausedUntil FROM flow WHERE id = 1`;
  }

  write(destination: string, state: Omit<FlowState, "inFlight">): void {
    this.db.run`INSERT INTO flow (id, destination, tokens, refilled_at, paused_until)
      VALUES (1, ${destination}, ${state.tokens}, ${state.refilledAt}, ${state.pausedUntil})
      ON CONFLICT (id) DO UPDATE SET destination = excluded.destination, tokens = excluded.tokens,
      refilled_at = excluded.refilled_at, paused_until = excluded.paused_until`;
  }
}
