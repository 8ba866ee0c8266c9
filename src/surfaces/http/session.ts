// The dashboard's human session. `mneme ui` mints a one-time login ticket (valid once, for a few
// minutes) and prints its URL; visiting it sets an HttpOnly, SameSite=Strict session cookie.
// Every decision must also carry the session's CSRF token. State lives in this process only:
// restarting the server logs everyone out, which is the point.
import { randomBytes, timingSafeEqual } from 'node:crypto';

export interface Session {
  id: string;
  csrf: string;
  createdAt: number;
  lastSeen: number;
  /** A one-shot message for the next page (the outcome of a decision). */
  flash?: { ok: boolean; text: string };
}

export interface SessionOptions {
  /** Milliseconds a login ticket stays valid (default 5 minutes). */
  ticketTtlMs?: number;
  /** Milliseconds of inactivity after which a session ends (default 12 hours). */
  idleTtlMs?: number;
  now?: () => number;
}

const token = () => randomBytes(32).toString('base64url');

export const SESSION_COOKIE = 'mneme_session';

export class Sessions {
  private readonly tickets = new Map<string, number>();
  private readonly sessions = new Map<string, Session>();
  private readonly ticketTtl: number;
  private readonly idleTtl: number;
  private readonly now: () => number;

  constructor(opts: SessionOptions = {}) {
    this.ticketTtl = opts.ticketTtlMs ?? 5 * 60_000;
    this.idleTtl = opts.idleTtlMs ?? 12 * 3600_000;
    this.now = opts.now ?? Date.now;
  }

  /** A fresh one-time login ticket, for `/login?t=<ticket>`. */
  issueTicket(): string {
    const t = token();
    this.tickets.set(t, this.now() + this.ticketTtl);
    return t;
  }

  /** Spends a ticket: a session if it was valid and unused, else null. */
  redeem(ticket: string): Session | null {
    const expires = this.tickets.get(ticket);
    this.tickets.delete(ticket);
    if (expires === undefined || expires < this.now()) return null;
    const s: Session = { id: token(), csrf: token(), createdAt: this.now(), lastSeen: this.now() };
    this.sessions.set(s.id, s);
    return s;
  }

  get(id: string | undefined): Session | null {
    if (!id) return null;
    const s = this.sessions.get(id);
    if (!s) return null;
    if (this.now() - s.lastSeen > this.idleTtl) {
      this.sessions.delete(id);
      return null;
    }
    s.lastSeen = this.now();
    return s;
  }

  end(id: string): void {
    this.sessions.delete(id);
  }
}

export function csrfMatches(session: Session, given: string | undefined): boolean {
  if (!given) return false;
  const a = Buffer.from(session.csrf);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}
