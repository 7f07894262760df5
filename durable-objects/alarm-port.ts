/** Where a Durable Object's alarm is kept: workerd's alarm in production; tests substitute one only they fire. */
export interface AlarmPort {
  get(): Promise<number | null>;
  set(at: number): Promise<void>;
  clear(): Promise<void>;
}

/** workerd's alarm of the object whose storage this is. */
export function storageAlarm(storage: DurableObjectStorage): AlarmPort {
  return {
    get: () => storage.getAlarm(),
    set: (at) => storage.setAlarm(at),
    clear: () => storage.deleteAlarm(),
  };
}
