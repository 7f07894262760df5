/**
 * Tickets: how a run names each of its calls to a destination's object (SPEC 10), so that asking
 * again keeps the call's lease or its place in the queue, and a grant finds its call.
 */

/** Names one call of the run at its destination: `s.<step>.<attempt>`, `i.<step>.<item>.<attempt>`, `c.<seq>.<attempt>`. */
export type Ticket = string;
export const stepTicket = (step: number, attempt: number): Ticket => `s.${step}.${attempt}`;
export const itemTicket = (step: number, item: number, attempt: number): Ticket =>
  `i.${step}.${item}.${attempt}`;
export const compensationTicket = (seq: number, attempt: number): Ticket => `c.${seq}.${attempt}`;

/** The step and attempt of a step's ticket; null for an item's or a compensation's. */
export function stepOfTicket(ticket: Ticket): { step: number; attempt: number } | null {
  const m = /^s\.(\d+)\.(\d+)$/.exec(ticket);
  return m ? { step: Number(m[1]), attempt: Number(m[2]) } : null;
}
