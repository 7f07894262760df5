/**
 * Wakes whoever waits for the next change of the checkpoint (a long-polling status read), and
 * tells its one listener (the listing feed, which only takes note: it runs inside writes),
 * and that listener again when the run's status was written (a new status is due at once).
 */
export class ChangeSignal {
  private readonly waiters = new Set<() => void>();
  private listener: (() => void) | undefined;
  private statusListener: (() => void) | undefined;

  /** `fn` is called after every write, synchronously: it must do no I/O. */
  listen(fn: () => void): void {
    this.listener = fn;
  }

  /** `fn` is called after a write of the run's status, synchronously: it must do no I/O. */
  listenForStatus(fn: () => void): void {
    this.statusListener = fn;
  }

  statusWritten(): void {
    this.statusListener?.();
  }

  notify(): void {
    this.listener?.();
    if (this.waiters.size === 0) return;
    const woken = [...this.waiters];
    this.waiters.clear();
    for (const wake of woken) wake();
  }

  /** Resolves at the next change, or after `ms` at the latest. */
  next(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.waiters.add(done);
    });
  }
}
