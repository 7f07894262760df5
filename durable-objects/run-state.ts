/**
 * The run's stored state, as the modules that read across all of it see it: the checkpoint
 * (RunStore), the rollback queue and the webhook outbox. The views, the status-change
 * records and the alarm's target each need all three.
 */
import type { Rollback } from "./rollback";
import type { RunStore } from "./store";
import type { WebhookOutbox } from "./webhook-outbox";

export interface RunState {
  store: RunStore;
  rollback: Rollback;
  outbox: WebhookOutbox;
}
