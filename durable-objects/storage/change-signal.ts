/** Wakes whoever waits for the next change of the checkpoint (a long-polling status read). */
export class ChangeSignal {
  private readonly waiters = new Set<() => void>();

  notify(): void {
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
