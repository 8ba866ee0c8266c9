// The journal chain through a purge (core/journal.ts verifyChain): an entry a purge rewrote keeps
// its hash and verifies only with exactly the content a later, valid purge entry vouches for;
// any other edit of it, or a vouch for other content or another entry, is still a break.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  EMPTY_HEAD,
  chainEntry,
  entryContentHash,
  verifyChain,
  type JournalBody,
  type JournalEntry,
} from '../src/core/journal.js';
import { eraser, redactedEntries } from '../src/core/purge.js';

const body = (op: string, reason: string | null, data?: Record<string, unknown>): JournalBody => ({
  at: '2026-03-01T10:00:00.000Z',
  actor: { kind: 'human' },
  op,
  target: { id: 'mem_01JZZZZZZZZZZZZZZZZZZZZZZZ', scope: 'global' },
  before: null,
  after: null,
  reason,
  idem: null,
  req: null,
  ...(data ? { data } : {}),
});

function chain(bodies: JournalBody[]): JournalEntry[] {
  const out: JournalEntry[] = [];
  let head = EMPTY_HEAD;
  for (const b of bodies) {
    const e = chainEntry(head, b);
    out.push(e);
    head = { seq: e.seq, hash: e.hash };
  }
  return out;
}

const scan = (entries: JournalEntry[]) =>
  verifyChain(entries.map((entry, i) => ({ entry, where: `line ${i + 1}` })));

describe('a purge keeps the journal verifiable', () => {
  const secret = 'Kq8zorvane5521Lp';
  const base = chain([
    body('remember', null),
    body('correct', `leaked ${secret}`),
    body('remember', 'ok'),
  ]);
  const rewritten = redactedEntries(base, eraser([secret]));
  const redacted = base.map((e) => rewritten.get(e.seq) ?? e);
  const vouch = (content: string, seq = 2) =>
    chainEntry(
      { seq: 3, hash: base[2]!.hash },
      body('purge', 'leaked credential', { redacted: [{ seq, content }] }),
    );

  it('the rewritten entry holds no text, keeps its hash, and verifies with the purge entry', () => {
    assert.equal(rewritten.size, 1);
    const e2 = redacted[1]!;
    assert.equal(e2.hash, base[1]!.hash);
    assert.doesNotMatch(JSON.stringify(e2), new RegExp(secret));
    assert.equal(scan(base).problem, null, 'the original chain verifies');
    assert.match(String(scan(redacted).problem?.problem), /was edited/, 'without a vouch: a break');
    assert.equal(scan([...redacted, vouch(entryContentHash(e2))]).problem, null);
  });

  it('any other edit, a vouch for other content or for another entry is still a break', () => {
    const e2 = redacted[1]!;
    const edited = { ...e2, reason: 'something else' };
    const withEdit = [redacted[0]!, edited, redacted[2]!, vouch(entryContentHash(e2))];
    assert.match(String(scan(withEdit).problem?.problem), /seq 2 was edited/);
    const wrong = [...redacted, vouch('0'.repeat(64))];
    assert.match(String(scan(wrong).problem?.problem), /seq 2 was edited/);
    const other = [...redacted, vouch(entryContentHash(e2), 1)];
    assert.match(String(scan(other).problem?.problem), /seq 2 was edited/);
  });
});
