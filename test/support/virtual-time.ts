/**
 * The virtual alarm and movable clock the test Worker's Durable Objects share (TestRunObject,
 * TestDestinationObject): both kept in the object's own storage, so they survive a crash and
 * eviction as a real alarm does, and workerd never fires the alarm: only a test does.
 */
import type { AlarmPort } from "../../durable-objects/alarm-port";

const ALARM_KEY = "test:alarm";
const CLOCK_KEY = "test:clock-offset";

/** An alarm that is a value in `storage`, fired only by tests. */
export function virtualAlarm(storage: DurableObjectStorage): AlarmPort {
  const { kv } = storage;
  return {
    get: async () => kv.get<number>(ALARM_KEY) ?? null,
    set: async (at) => kv.put(ALARM_KEY, at),
    clear: async () => {
      kv.delete(ALARM_KEY);
    },
  };
}

/** The clock's offset from `Date.now()`, as stored. */
export function clockOffset(storage: DurableObjectStorage): number {
  return storage.kv.get<number>(CLOCK_KEY) ?? 0;
}

/** Moves the stored clock `ms` forward; returns the new offset. */
export function moveClock(storage: DurableObjectStorage, ms: number): number {
  if (!(ms >= 0)) throw new RangeError(`the clock only moves forward, not by ${ms} ms`);
  const offset = clockOffset(storage) + ms;
  storage.kv.put(CLOCK_KEY, offset);
  return offset;
}

/**
 * Fires `alarm` as workerd would deliver it: cleared, then `run()` (which may set it again);
 * when `run()` fails the alarm stays set, as workerd retries it. False when none is set.
 */
export async function fireVirtualAlarm(
  alarm: AlarmPort,
  run: () => Promise<void>,
): Promise<boolean> {
  const at = await alarm.get();
  if (at === null) return false;
  await alarm.clear();
  try {
    await run();
  } catch (err) {
    if ((await alarm.get()) === null) await alarm.set(at);
    throw err;
  }
  return true;
}
