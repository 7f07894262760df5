/** Wakes the iteration loop when an attempt settles, or after a timeout. A notification is never lost. */
export class Wakeup {
  private pending = false;
  private resolve: (() => void) | undefined;

  notify(): void {
    this.pending = true;
    this.resolve?.();
  }

  wait(timeoutMs?: number): Promise<void> {
    if (this.pending) {
      this.pending = false;
      return Promise.resolve();
    }
    return new Promise((res) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      this.resolve = () => {
        if (timer !== undefined) clearTimeout(timer);
        this.resolve = undefined;
        this.pending = false;
        res();
      };
      if (timeoutMs !== undefined) timer = setTimeout(this.resolve, Math.max(0, timeoutMs));
    });
  }
}
