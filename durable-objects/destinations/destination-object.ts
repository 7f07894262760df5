/**
 * DestinationObject: one Durable Object per destination (SPEC 10), named by its key (see
 * src/engine/destinations.ts), shared by every run of every key. It grants slots as leases
 * that expire unless renewed (a crashed run's slot comes back within LEASE_TTL_MS), queues the
 * calls it cannot grant yet (first asked, first served), spends a token bucket for
 * ratePerSecond/burst, and holds every grant while the destination is paused. When a queued
 * call is granted, it tells that call's run (`RunObject.quotaGranted`), which wakes it.
 *
 * The decisions are src/engine/flow-control.ts; the tables are storage/destinations/. Its own
 * alarm expires leases and wakes the queue (a token refills, a pause ends).
 */
import { DurableObject } from "cloudflare:workers";
import type { Limits } from "../../src/engine/destinations";
import {
  LEASE_TTL_MS,
  canGrant,
  extendPause,
  initialState,
  nextGrantAt,
  refill,
  take,
  type FlowState,
} from "../../src/engine/flow-control";
import { settings, type Env } from "../../src/env";
import { storageAlarm, type AlarmPort } from "../alarm-port";
import { BOARD_NAME } from "./pause-board";
import { FlowTable } from "../storage/destinations/flow-table";
import { LeaseTable } from "../storage/destinations/lease-table";
import { createDestinationTables } from "../storage/destinations/schema";
import { WaiterTable } from "../storage/destinations/waiter-table";
import { Sql } from "../storage/sql";

export type AcquireOutcome =
  | { granted: true }
  /** Queued at `position` (1: next); `pausedForMs`: how long the destination's pause still lasts. */
  | { granted: false; position: number; pausedForMs: number | null };

/** What `GET /v1/destinations` shows of a destination (SPEC 10). */
export interface DestinationState {
  inFlight: number;
  waiting: number;
  /** The end of the current pause, or null. */
  pausedUntil: number | null;
}

export class DestinationObject extends DurableObject<Env> {
  private readonly flow: FlowTable;
  private readonly leases: LeaseTable;
  private readonly waiters: WaiterTable;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const db = new Sql(ctx.storage.sql);
    createDestinationTables(db);
    this.flow = new FlowTable(db);
    this.leases = new LeaseTable(db);
    this.waiters = new WaiterTable(db);
  }

  /**
   * A call of run `runId` (its `ticket`) asks for a slot: granted now, or queued behind the
   * calls that asked before. Idempotent: asking again keeps a lease (renewed) or a place.
   */
  async acquire(destination: string, runId: string, ticket: string): Promise<AcquireOutcome> {
    const now = this.now();
    const limits = this.open(destination, now);
    if (this.leases.has(runId, ticket)) {
      this.leases.renew(runId, [ticket], now + LEASE_TTL_MS);
      return { granted: true };
    }
    if (this.waiters.position(runId, ticket) === null) this.waiters.enqueue(runId, ticket, now);
    this.pump(destination, limits, now, { runId, ticket });
    await this.rearm(limits, now);
    if (this.leases.has(runId, ticket)) return { granted: true };
    const { pausedUntil } = this.state(limits, now);
    return {
      granted: false,
      position: this.waiters.position(runId, ticket)!,
      pausedForMs: pausedUntil > now ? pausedUntil - now : null,
    };
  }

  /**
   * The calls of `tickets` ended: their slots go to the next in the queue. Answers the calls of
   * the same run granted now (told here rather than through `quotaGranted`).
   */
  async release(destination: string, runId: string, tickets: string[]): Promise<string[]> {
    const now = this.now();
    const limits = this.open(destination, now);
    this.leases.release(runId, tickets);
    const granted = this.pump(destination, limits, now, { runId });
    await this.rearm(limits, now);
    return granted;
  }

  /** Calls still in flight keep their slots; answers how many of `tickets` were still held. */
  async renew(destination: string, runId: string, tickets: string[]): Promise<number> {
    const now = this.now();
    const limits = this.open(destination, now);
    const held = this.leases.renew(runId, tickets, now + LEASE_TTL_MS);
    await this.rearm(limits, now);
    return held;
  }

  /** Run `runId` was cancelled: its slots and places in the queue are given back at once. */
  async cancelRun(destination: string, runId: string): Promise<void> {
    const now = this.now();
    const limits = this.open(destination, now);
    this.leases.releaseRun(runId);
    this.waiters.removeRun(runId);
    this.pump(destination, limits, now);
    await this.rearm(limits, now);
  }

  /**
   * The destination answered 429 (or 503 with Retry-After): no grant for `ms` (within the
   * bounds of flow-control.ts). Published on the pause board, so that runs of other isolates
   * learn of it. Answers the pause's end.
   */
  async pause(destination: string, ms: number): Promise<number> {
    const now = this.now();
    const limits = this.open(destination, now);
    const stored = this.state(limits, now);
    const pausedUntil = extendPause(stored.pausedUntil, now, ms);
    this.flow.write(destination, { ...stored, pausedUntil });
    const board = this.env.PAUSE_BOARD.get(this.env.PAUSE_BOARD.idFromName(BOARD_NAME));
    this.ctx.waitUntil(
      board.publish(destination, pausedUntil - now).catch((err: unknown) => {
        console.error("edgestep: publishing a pause failed", err);
      }),
    );
    await this.rearm(limits, now);
    return pausedUntil;
  }

  /** In flight, waiting, and the current pause (`GET /v1/destinations`). */
  async describe(destination: string): Promise<DestinationState> {
    const now = this.now();
    const { pausedUntil } = this.state(this.open(destination, now), now);
    return {
      inFlight: this.leases.count(),
      waiting: this.waiters.count(),
      pausedUntil: pausedUntil > now ? pausedUntil : null,
    };
  }

  /** Expires the leases of runs that stopped renewing them, and grants what may start now. */
  override async alarm(): Promise<void> {
    const stored = this.flow.read();
    if (!stored) return;
    const now = this.now();
    const limits = this.open(stored.destination, now);
    this.pump(stored.destination, limits, now);
    await this.rearm(limits, now);
  }

  /** The destination's limits (none when unlisted), with expired leases dropped. */
  private open(destination: string, now: number): Limits {
    const limits = settings(this.env).destinations.limitsOf(destination) ?? {};
    if (!this.flow.read()) this.flow.write(destination, initialState(limits, now));
    this.leases.expire(now);
    return limits;
  }

  /** The stored bucket and pause, refilled to `now`, with the leases held. */
  private state(limits: Limits, now: number): FlowState {
    const stored = this.flow.read()!;
    const state: FlowState = { ...stored, inFlight: this.leases.count() };
    return refill(state, limits, now);
  }

  /**
   * Grants slots to the head of the queue while one may start, and tells each call's run,
   * except the caller's calls (its `ticket`, or all of its run's), which it answers itself:
   * returned.
   */
  private pump(
    destination: string,
    limits: Limits,
    now: number,
    caller?: { runId: string; ticket?: string },
  ): string[] {
    const answered: string[] = [];
    let state = this.state(limits, now);
    for (let w = this.waiters.head(); w && canGrant(state, limits, now); w = this.waiters.head()) {
      this.waiters.remove(w.seq);
      this.leases.grant(w.runId, w.ticket, now, now + LEASE_TTL_MS);
      state = take(state, limits);
      const callers = w.runId === caller?.runId && (caller.ticket ?? w.ticket) === w.ticket;
      if (callers) answered.push(w.ticket);
      else this.notify(destination, w.runId, w.ticket);
    }
    this.flow.write(destination, state);
    return answered;
  }

  /** Tells a run its call was granted; a run that cannot hear it asks again at its own time. */
  private notify(destination: string, runId: string, ticket: string): void {
    const run = this.env.RUNS.get(this.env.RUNS.idFromName(runId));
    this.ctx.waitUntil(
      run.quotaGranted(destination, ticket).catch((err: unknown) => {
        console.error(`edgestep: telling run ${runId} of its slot failed`, err);
      }),
    );
  }

  /** Points the alarm at the earliest lease expiry or the next possible grant; clears it when there is none. */
  private async rearm(limits: Limits, now: number): Promise<void> {
    const state = this.state(limits, now);
    const due = [
      this.leases.earliestExpiry(),
      nextGrantAt(state, limits, now, this.waiters.count()),
    ].filter((t): t is number => t !== null);
    if (due.length === 0) await this.alarms.clear();
    else await this.alarms.set(Math.max(now, Math.min(...due)));
  }

  /** The object's clock. Tests substitute one they can move forward (test/support). */
  protected now(): number {
    return Date.now();
  }

  /** The object's alarm: workerd's. Tests substitute one only they fire. */
  protected get alarms(): AlarmPort {
    return storageAlarm(this.ctx.storage);
  }
}
