/** Where the run's alarm is kept: workerd's alarm in production; tests substitute one only they fire. */
export interface AlarmPort {
  get(): Promise<number | null>;
  set(at: number): Promise<void>;
  clear(): Promise<void>;
}
