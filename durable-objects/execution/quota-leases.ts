/**
 * The slots a run's calls hold in their destinations (SPEC 10), for QuotaGate: each held slot
 * is a lease, renewed every LEASE_RENEW_MS while any is held (a crashed run's expire), and
 * given back when its call ends; the answer to a give-back may grant this run's next calls.
 */
import { LEASE_RENEW_MS } from "../../src/engine/flow-control";
import type { DestinationObject } from "../destinations/destination-object";
import type { Ticket } from "./tickets";

/** A slot held by a call in flight, given back when it ends. */
export interface Lease {
  destination: string;
  ticket: Ticket;
}

export interface LeaseEnv {
  /** The destination's object. */
  slots(destination: string): DurableObjectStub<DestinationObject>;
  /** A destination answered that it granted `ticket` (as RunObject.quotaGranted is told). */
  onGrant(destination: string, ticket: Ticket): void;
  /** Runs work beside the run (never awaited by a call's path). */
  beside(work: Promise<unknown>): void;
  runId(): string;
}

/** Tells `destination` something beside the run; a failure is logged, never thrown at a call. */
export function tell(
  env: LeaseEnv,
  destination: string,
  call: (slots: DurableObjectStub<DestinationObject>) => Promise<unknown>,
): void {
  env.beside(
    call(env.slots(destination)).catch((err: unknown) =>
      console.error(`edgestep: telling ${destination} failed`, err),
    ),
  );
}

export class QuotaLeases {
  /** Leases of calls in flight: ticket → destination. */
  private readonly held = new Map<Ticket, string>();
  /** Renews the leases held, every LEASE_RENEW_MS while any is (the calls are in flight in this instance). */
  private renewal: ReturnType<typeof setTimeout> | undefined;
  /** Give-backs sent and not answered yet: their answers may grant this run's next calls. */
  private readonly releases = new Set<Promise<void>>();

  constructor(private readonly env: LeaseEnv) {}

  /** A call got a slot: its lease, renewed until the call ends. */
  hold(destination: string, ticket: Ticket): Lease {
    this.held.set(ticket, destination);
    this.renewal ??= setTimeout(() => this.renew(), LEASE_RENEW_MS);
    return { destination, ticket };
  }

  /** The call holding `lease` ended (any outcome): its slot goes to the next caller. */
  release(lease: Lease | null): void {
    if (lease === null) return;
    this.held.delete(lease.ticket);
    if (this.held.size === 0) this.stopRenewing();
    this.giveBack(lease.destination, lease.ticket);
  }

  /** Gives a slot back; the same run's calls it lets through are granted at once (onGrant). */
  giveBack(destination: string, ticket: Ticket): void {
    const release = this.env
      .slots(destination)
      .release(destination, this.env.runId(), [ticket])
      .then(
        (granted) => {
          for (const t of granted) this.env.onGrant(destination, t);
        },
        (err: unknown) =>
          console.error(`edgestep: giving back a slot of ${destination} failed`, err),
      )
      .finally(() => this.releases.delete(release));
    this.releases.add(release);
    this.env.beside(release);
  }

  /** Slots are being given back: their answers may grant this run's queued calls (see `released`). */
  get releasing(): boolean {
    return this.releases.size > 0;
  }

  /** Resolves once the give-backs sent so far are answered (and the grants they brought applied). */
  async released(): Promise<void> {
    await Promise.all(this.releases);
  }

  /** The run stopped: its destinations take everything back at once (QuotaGate.cancel). */
  forget(): void {
    this.held.clear();
    this.stopRenewing();
  }

  /** Renews the leases of the calls in flight, so a long call keeps its slot (a crash stops it: they expire). */
  private renew(): void {
    this.renewal = undefined;
    const byDestination = new Map<string, Ticket[]>();
    for (const [ticket, destination] of this.held) {
      const tickets = byDestination.get(destination) ?? [];
      tickets.push(ticket);
      byDestination.set(destination, tickets);
    }
    for (const [destination, tickets] of byDestination)
      tell(this.env, destination, (slots) => slots.renew(destination, this.env.runId(), tickets));
    if (this.held.size > 0) this.renewal = setTimeout(() => this.renew(), LEASE_RENEW_MS);
  }

  private stopRenewing(): void {
    if (this.renewal !== undefined) clearTimeout(this.renewal);
    this.renewal = undefined;
  }
}
