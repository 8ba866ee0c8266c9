// Prometheus metrics for operators, in the text exposition format (hand-written: a few counters
// and one histogram need no library). Counters are per process since it started: scrape every
// instance. The gauges (journal length, proposals pending) are read from the store at scrape time
// for the caller's tenant, so every instance reports the same values for a shared database.
import type { MiddlewareHandler } from 'hono';
import { matchedRoutes } from 'hono/route';
import { MnemeError } from '../../core/errors.js';
import type { HttpEnv } from './context.js';

const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** What the store reports at scrape time. */
export interface StoreGauges {
  /** Null when the caller may not see store-wide counts (a token bound to projects). */
  journalLength: number | null;
  proposalsPending: number;
}

const esc = (v: string) => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
const labels = (l: Record<string, string>) =>
  `{${Object.entries(l)
    .map(([k, v]) => `${k}="${esc(v)}"`)
    .join(',')}}`;

/** `/api/memories/01J…/supersede` → `/api/memories/:id/supersede`: bounded label values. */
export function routeLabel(method: string, routePath: string | undefined, path: string): string {
  if (routePath && routePath !== '*' && !routePath.endsWith('/*')) return `${method} ${routePath}`;
  if (path.startsWith('/api/')) return `${method} /api/*`;
  if (path === '/mcp' || path.startsWith('/mcp/')) return `${method} /mcp`;
  if (path === '/metrics') return `${method} /metrics`;
  return `${method} /*`;
}

export class Metrics {
  private readonly requests = new Map<string, number>();
  private readonly refusals = new Map<string, number>();
  private readonly latency = new Map<string, { buckets: number[]; sum: number; count: number }>();
  private writes = 0;

  request(route: string, status: number, seconds: number): void {
    const key = `${route}\u0000${status}`;
    this.requests.set(key, (this.requests.get(key) ?? 0) + 1);
    let h = this.latency.get(route);
    if (!h) this.latency.set(route, (h = { buckets: BUCKETS.map(() => 0), sum: 0, count: 0 }));
    for (const [i, le] of BUCKETS.entries()) if (seconds <= le) h.buckets[i]!++;
    h.sum += seconds;
    h.count++;
  }

  write(): void {
    this.writes++;
  }

  /** A domain error answered to a client: counted by code and, when it names one, by reason. */
  refusal(e: MnemeError): void {
    const d = e.details ?? {};
    const reason =
      typeof d.reason === 'string' ? d.reason : typeof d.kind === 'string' ? d.kind : e.code;
    const key = `${e.code}\u0000${reason.slice(0, 40)}`;
    this.refusals.set(key, (this.refusals.get(key) ?? 0) + 1);
  }

  /** Times every request and counts it by route and status; successful API writes too. */
  middleware(): MiddlewareHandler<HttpEnv> {
    return async (c, next) => {
      const t0 = process.hrtime.bigint();
      await next();
      const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
      const path = new URL(c.req.url).pathname;
      const route = matchedRoutes(c)
        .map((r) => r.path)
        .filter((p) => !p.includes('*'))
        .pop();
      this.request(routeLabel(c.req.method, route, path), c.res.status, seconds);
      if (c.req.method === 'POST' && path.startsWith('/api/memories') && c.res.status < 300)
        this.write();
    };
  }

  render(g: StoreGauges | null): string {
    const out: string[] = [];
    out.push('# HELP mneme_http_requests_total HTTP requests by route and status.');
    out.push('# TYPE mneme_http_requests_total counter');
    for (const [k, n] of [...this.requests].sort()) {
      const [route, status] = k.split('\u0000') as [string, string];
      out.push(`mneme_http_requests_total${labels({ route, status })} ${n}`);
    }
    out.push('# HELP mneme_http_request_duration_seconds HTTP request latency.');
    out.push('# TYPE mneme_http_request_duration_seconds histogram');
    for (const [route, h] of [...this.latency].sort()) {
      for (const [i, le] of BUCKETS.entries())
        out.push(
          `mneme_http_request_duration_seconds_bucket${labels({ route, le: String(le) })} ${h.buckets[i]}`,
        );
      out.push(
        `mneme_http_request_duration_seconds_bucket${labels({ route, le: '+Inf' })} ${h.count}`,
      );
      out.push(`mneme_http_request_duration_seconds_sum${labels({ route })} ${h.sum}`);
      out.push(`mneme_http_request_duration_seconds_count${labels({ route })} ${h.count}`);
    }
    out.push('# HELP mneme_writes_total Memory writes accepted through the API by this process.');
    out.push('# TYPE mneme_writes_total counter');
    out.push(`mneme_writes_total ${this.writes}`);
    out.push(
      '# HELP mneme_refusals_total Requests answered with a domain error, by code and reason.',
    );
    out.push('# TYPE mneme_refusals_total counter');
    for (const [k, n] of [...this.refusals].sort()) {
      const [code, reason] = k.split('\u0000') as [string, string];
      out.push(`mneme_refusals_total${labels({ code, reason })} ${n}`);
    }
    if (g) {
      if (g.journalLength !== null) {
        out.push('# HELP mneme_journal_length Entries in the journal (its head seq).');
        out.push('# TYPE mneme_journal_length gauge');
        out.push(`mneme_journal_length ${g.journalLength}`);
      }
      out.push('# HELP mneme_proposals_pending Proposals waiting for a person.');
      out.push('# TYPE mneme_proposals_pending gauge');
      out.push(`mneme_proposals_pending ${g.proposalsPending}`);
    }
    return `${out.join('\n')}\n`;
  }
}
