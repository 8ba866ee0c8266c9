// Usage events of a server, written in the background: a recall answers without waiting for its
// usage row, and the rows of the requests that arrived together go in one INSERT. Nothing is
// dropped quietly: a failed write keeps its events and is retried (with a growing delay, each
// failure logged); a read of usage (or anything that rewrites or counts it: purge, rebuild,
// status) waits until every event added before it is written, and close() writes what is left
// or logs how many events could not be written. What a crash of the process can lose is the
// last delay's worth (default 20 ms) of usage events; a usage event is not a memory write.
import { MnemeError } from '../../core/errors.js';
import type { UsageEvent } from '../port.js';

export interface UsageBatchOptions {
  /** How long an event may wait for others to share its INSERT (default 20 ms). */
  delayMs?: number;
  /** Events held while the database refuses them; beyond this the oldest go, logged (100k). */
  maxPending?: number;
  /** Where a failed or abandoned write is reported (the server's log). */
  log?: (line: string) => void;
}

/** The most events one INSERT carries. */
const MAX_BATCH = 500;
const MAX_RETRY_DELAY_MS = 5_000;

export class UsageBatch {
  private pending: UsageEvent[] = [];
  private timer: NodeJS.Timeout | null = null;
  private inflight: Promise<void> | null = null;
  private failures = 0;
  private lastError: unknown = null;
  /** Events given up on because the pending list was full (logged as they go). */
  dropped = 0;
  /** Events ever added, and ever written or dropped (the pending list is first in, first out). */
  private added = 0;
  private done = 0;
  private readonly delayMs: number;
  private readonly maxPending: number;
  private readonly log: (line: string) => void;

  constructor(
    private readonly write: (events: UsageEvent[]) => Promise<void>,
    o: UsageBatchOptions = {},
  ) {
    this.delayMs = o.delayMs ?? 20;
    this.maxPending = o.maxPending ?? 100_000;
    this.log = o.log ?? ((line) => process.stderr.write(`${line}\n`));
  }

  /** Events waiting to be written (tests, gauges). */
  get size(): number {
    return this.pending.length;
  }

  add(events: readonly UsageEvent[]): void {
    if (events.length === 0) return;
    this.pending.push(...events);
    this.added += events.length;
    const over = this.pending.length - this.maxPending;
    if (over > 0) {
      this.pending.splice(0, over);
      this.dropped += over;
      this.done += over;
      this.log(
        `mneme: ${over} usage events dropped (${this.dropped} so far): the database has refused usage writes ${this.failures} times in a row; last error: ${describe(this.lastError)}`,
      );
    }
    if (this.pending.length >= MAX_BATCH) void this.flushOnce();
    else this.schedule(this.delayMs);
  }

  private schedule(ms: number): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.flushOnce();
    }, ms);
    this.timer.unref();
  }

  /** One INSERT of what is pending (after the one in flight); a failure keeps the events. */
  private async flushOnce(): Promise<boolean> {
    while (this.inflight) await this.inflight;
    if (this.pending.length === 0) return true;
    const batch = this.pending.splice(0, MAX_BATCH);
    let ok = true;
    this.inflight = (async () => {
      try {
        await this.write(batch);
        this.done += batch.length;
        this.failures = 0;
        this.lastError = null;
      } catch (e) {
        ok = false;
        this.pending.unshift(...batch);
        this.failures++;
        this.lastError = e;
        const retry = Math.min(MAX_RETRY_DELAY_MS, this.delayMs * 2 ** this.failures);
        this.log(
          `mneme: writing ${batch.length} usage events failed (${describe(e)}); ${this.pending.length} pending, retrying in ${retry} ms`,
        );
        this.schedule(retry);
      }
    })();
    try {
      await this.inflight;
    } finally {
      this.inflight = null;
    }
    if (ok && this.pending.length > 0) this.schedule(this.delayMs);
    return ok;
  }

  /**
   * Every event added before this call is written; throws when the database refuses them (a
   * read that went ahead would miss them, a purge would leave them unrewritten).
   */
  async settle(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    const target = this.added;
    while (this.done < target) {
      if (!(await this.flushOnce()))
        throw new MnemeError(
          'internal',
          `${this.pending.length} usage events could not be written: ${describe(this.lastError)}`,
          { hint: 'check the database this server writes to; the events are kept and retried' },
        );
    }
  }

  /** At shutdown: writes what is left (a few tries), else says how many events are lost. */
  async close(): Promise<void> {
    for (let i = 0; i < 3; i++) {
      try {
        await this.settle();
        return;
      } catch {
        await new Promise((r) => setTimeout(r, this.delayMs * 2 ** i));
      }
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.log(
      `mneme: ${this.pending.length} usage events were not written at shutdown: ${describe(this.lastError)}`,
    );
    this.dropped += this.pending.length;
    this.done += this.pending.length;
    this.pending = [];
  }
}

const describe = (e: unknown) =>
  e === null ? 'none' : e instanceof Error ? e.message.slice(0, 200) : String(e).slice(0, 200);
