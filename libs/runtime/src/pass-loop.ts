/**
 * Runs `pass` now, or once more right after the one in progress: wake-ups that arrive while a
 * pass runs collapse into one more pass, and two passes never run at once. The loop of a
 * service that looks at its table when woken (the scheduler's firing pass, the polling
 * service's claim pass).
 */
export class PassLoop {
  private again = false;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(private readonly pass: () => Promise<void>) {}

  wake(): void {
    if (this.stopped) return;
    this.again = true;
    this.running ??= this.loop();
  }

  /** Takes no more wake-ups; resolves once the pass in progress (if any) has ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.running;
  }

  private async loop(): Promise<void> {
    try {
      while (this.again && !this.stopped) {
        this.again = false;
        await this.pass();
      }
    } finally {
      this.running = undefined;
    }
  }
}
