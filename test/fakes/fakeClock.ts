/**
 * A fixed clock whose `sleep` advances time instantly and records each requested duration, so
 * bounded waits finish without real time passing.
 */
export class FakeClock {
  readonly sleeps: number[] = [];
  private current: number;

  constructor(start: Date) {
    this.current = start.getTime();
  }

  readonly now = (): Date => new Date(this.current);

  /** Called after every sleep with the number of sleeps so far (e.g. to make a document appear). */
  onSleep: ((count: number) => void) | undefined;

  readonly sleep = async (durationInMs: number): Promise<void> => {
    this.sleeps.push(durationInMs);
    this.current += durationInMs;
    this.onSleep?.(this.sleeps.length);
    await Promise.resolve();
  };

  advance(durationInMs: number): void {
    this.current += durationInMs;
  }

  set(instant: Date): void {
    this.current = instant.getTime();
  }
}
