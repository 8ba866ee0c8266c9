// docs/benchmarks.md's team-server section: the default mix's runs make the per-size tables and
// the targets; a run of one kind of operation alone is shown beside them only when its label
// says what it is (`writes-…`, `floor-…`), and a writes-only run is the writes target's figure.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { renderDocs, type RunEnvelope } from '../bench/src/results.js';
import { DEFAULT_MIX, parseMix } from '../bench/src/serve.js';

const machine = { cores: 2 } as RunEnvelope['machine'];

function serveRun(
  label: string,
  mix: Record<string, number>,
  perS: Record<string, number>,
  writesPerS: number,
): RunEnvelope {
  const ops = Object.fromEntries(
    Object.keys(DEFAULT_MIX).map((op) => [
      op,
      {
        count: Math.round((perS[op] ?? 0) * 20),
        per_s: perS[op] ?? 0,
        p50_ms: perS[op] ? 7.5 : null,
        p95_ms: null,
        p99_ms: null,
      },
    ]),
  );
  return {
    benchmark: 'serve',
    name: `serve-${label}`,
    label,
    command: `mneme bench serve --memories 10000 --label ${label}`,
    date: '2026-12-04T01:00:00.000Z',
    git_commit: 'abcdef0123',
    machine,
    n: 10000,
    metrics: {
      recall_per_s: perS.recall ?? 0,
      recall_p50_ms: 50,
      recall_p95_ms: 100,
      writes_per_s: writesPerS,
      errors: 0,
      lost_writes: 0,
    },
    config: {
      instances: 2,
      tenants: 4,
      clients: 16,
      duration_s: 20,
      loop: 'closed',
      mix,
      memories_per_tenant: 10000,
    },
    ops,
  };
}

test('a labelled writes-only run gives the writes target its figure; an unlabelled one does not', () => {
  const runs = [
    serveRun('10k', DEFAULT_MIX, { recall: 170, remember: 30 }, 43.5),
    serveRun('writes-10k', parseMix('remember=1'), { remember: 321.5 }, 321.5),
    serveRun('floor-health-10k', parseMix('health=1'), { health: 2100.25 }, 0),
    serveRun('main', parseMix('remember=1'), { remember: 987.5 }, 987.5),
  ];
  const doc = renderDocs(runs);
  assert.match(doc, /### One kind of operation alone/);
  assert.match(
    doc,
    /\| 10000 \| writes\/s across instances \(writes only, `writes-10k`\) \| ≥ 500 \| 321\.5 \| not met \|/,
  );
  assert.match(
    doc,
    /\| 10000 \| writes\/s across instances \(in the mix\) \| ≥ 500 \| 43\.5 \| not met \|/,
  );
  assert.match(doc, /\| floor-health-10k \| 10000 \| health \| 42005 \| 2100\.25 \|/);
  assert.doesNotMatch(doc, /987\.5/);
});

test('without a run of one operation alone the section is left out', () => {
  const doc = renderDocs([serveRun('10k', DEFAULT_MIX, { recall: 170, remember: 30 }, 43.5)]);
  assert.match(doc, /### Targets \(issue 17/);
  assert.doesNotMatch(doc, /One kind of operation alone|writes only/);
});
