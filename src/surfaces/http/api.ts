// The JSON API under /api: the engine's read and write operations over HTTP. Bodies and the recall
// parameters are parsed with schemas derived from the engine's payload schemas (bodies.ts; strict:
// an unknown field such as `trust` is refused), turned into write-path ops, and every write goes
// through engine.apply. Errors map via errors.ts.
import { Hono, type Context } from 'hono';
import { MnemeError, invalid } from '../../core/errors.js';
import type { Engine } from '../../engine/engine.js';
import {
  RecallInput,
  parsePayload,
  recallOptions,
  writeOp,
  type WriteInput,
} from '../../engine/payloads.js';
import { apiActor, readerOf, surfaceOf } from './auth.js';
import { BODIES, recallFromQuery } from './bodies.js';
import type { AppOptions, HttpEnv } from './context.js';
import { OPENAPI } from './openapi.js';
import { resolveProject, type ProjectChoice } from './project-param.js';
import { servedReport, servedReports } from './reports.js';

async function jsonBody(c: Context<HttpEnv>): Promise<Record<string, unknown>> {
  const ct = c.req.header('content-type') ?? '';
  if (!/^application\/json\b/i.test(ct))
    throw invalid('the request body must be JSON', 'set Content-Type: application/json');
  let v: unknown;
  try {
    v = await c.req.json();
  } catch {
    throw invalid('the request body is not valid JSON');
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v))
    throw invalid('the request body must be a JSON object');
  return v as Record<string, unknown>;
}

/** `If-Match: 3` or `If-Match: "3"` → expected_rev 3. */
export function ifMatch(c: Context<HttpEnv>): number | undefined {
  const h = c.req.header('if-match');
  if (h === undefined || h.trim() === '*') return undefined;
  const m = /^\s*(?:W\/)?"?(\d{1,9})"?\s*$/.exec(h);
  if (!m || Number(m[1]) < 1)
    throw invalid(
      `If-Match must be a revision number, not "${h.slice(0, 40)}"`,
      'e.g. If-Match: "3"',
    );
  return Number(m[1]);
}

/** What a write on /memories/:id carries in its headers: If-Match and Idempotency-Key. */
const addressed = (c: Context<HttpEnv>) => ({
  expected_rev: ifMatch(c),
  idempotency_key: idempotencyKey(c),
});

function idempotencyKey(c: Context<HttpEnv>): string | undefined {
  const k = c.req.header('idempotency-key');
  if (k === undefined) return undefined;
  if (k.length < 1 || k.length > 200) throw invalid('Idempotency-Key must be 1 to 200 characters');
  return k;
}

function intParam(v: string | undefined, name: string, max: number): number | undefined {
  if (v === undefined || v === '') return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > max)
    throw invalid(`${name} must be an integer from 1 to ${max}, not "${v.slice(0, 20)}"`);
  return n;
}

export function apiRoutes(opts: AppOptions): Hono<HttpEnv> {
  const api = new Hono<HttpEnv>();

  /** The engine for this request, bound to the chosen project (body value wins over query). */
  const bound = (
    c: Context<HttpEnv>,
    bodyProject?: unknown,
  ): { engine: Engine; choice: ProjectChoice } => {
    const q = c.req.query('project');
    if (typeof bodyProject === 'string' && q !== undefined && q !== bodyProject)
      throw invalid('project is given twice with different values (query and body)');
    const caller = c.get('caller');
    const choice = resolveProject(typeof bodyProject === 'string' ? bodyProject : q, caller);
    const engine = opts.engineFor({
      binding: { ...choice.binding, reader: readerOf(caller) },
      surface: surfaceOf(caller),
      tenant: caller.kind === 'token' ? caller.principal.tenant : null,
      root: choice.root,
    });
    return { engine, choice };
  };

  api.get('/openapi.json', (c) => c.json(OPENAPI));

  api.get('/health', async (c) => {
    const { engine } = bound(c);
    const s = await engine.status();
    return c.json({
      ok: true,
      version: opts.version ?? null,
      backend: s.backend,
      // The journal head counts every project's writes: shown to the local person only.
      journal: s.journalHead ?? null,
    });
  });

  api.get('/projects', async (c) => {
    const { engine } = bound(c);
    const caller = c.get('caller');
    const projects = Object.entries(await engine.projectCounts())
      .filter(
        ([scope]) =>
          caller.kind === 'local' ||
          caller.principal.projects === '*' ||
          caller.principal.projects.includes(scope),
      )
      .map(([id, memories]) => ({ id, memories }));
    return c.json({ projects });
  });

  api.get('/memories', async (c) => {
    const { engine } = bound(c);
    const q = c.req.query();
    const memories = await engine.browse({
      type: q.type || undefined,
      trust: q.trust || undefined,
      status: q.status || undefined,
      freshness: q.freshness || undefined,
      limit: intParam(q.limit, 'limit', 500),
    });
    return c.json({ memories });
  });

  api.post('/memories', async (c) => {
    const raw = await jsonBody(c);
    const b = parsePayload(BODIES.remember, raw, 'remember');
    const { engine } = bound(c, b.project);
    const { project: _p, ...rest } = b;
    const [r] = await engine.apply(
      [writeOp('remember', { ...rest, idempotency_key: idempotencyKey(c) })],
      apiActor(c.get('caller')),
    );
    c.header('Location', `/api/memories/${r!.id}`);
    c.header('ETag', `"${r!.rev}"`);
    if (r!.replayed) c.header('Idempotent-Replayed', 'true');
    return c.json(r, 201);
  });

  api.get('/memories/:id', async (c) => {
    const { engine } = bound(c);
    const level = c.req.query('level') ?? 'full';
    if (!['abstract', 'outline', 'full'].includes(level))
      throw invalid('level must be abstract, outline or full');
    const m = await engine.read(c.req.param('id'), level as 'full');
    c.header('ETag', `"${m.rev}"`);
    return c.json(m);
  });

  api.get('/memories/:id/artifact', async (c) => {
    const { engine } = bound(c);
    return c.json(await engine.readArtifact(c.req.param('id'), c.req.query('range')));
  });

  api.get('/memories/:id/history', async (c) => {
    const { engine } = bound(c);
    return c.json(await engine.history(c.req.param('id')));
  });

  api.get('/memories/:id/trace', async (c) => {
    const { engine } = bound(c);
    return c.json(await engine.trace(c.req.param('id'), opts.archive ?? null));
  });

  // Purge is a person's decision in a terminal, never an API call (a token or a page script).
  api.post('/memories/:id/purge', () => {
    throw new MnemeError('refused', 'purging a memory is not possible over the API', {
      hint: "a person runs `mneme purge ID --reason TEXT` in a terminal on the store's machine (outside any agent session)",
    });
  });

  for (const verb of ['supersede', 'correct'] as const) {
    api.post(`/memories/:id/${verb}`, async (c) => {
      const b = parsePayload(BODIES[verb], await jsonBody(c), verb);
      const { engine } = bound(c, b.project);
      const { project: _p, ...rest } = b;
      const [r] = await engine.apply(
        [writeOp(verb, { id: c.req.param('id'), ...rest, ...addressed(c) })],
        apiActor(c.get('caller')),
      );
      c.header('ETag', `"${r!.rev}"`);
      if (r!.replayed) c.header('Idempotent-Replayed', 'true');
      return c.json(r);
    });
  }

  for (const verb of ['retract', 'link'] as const) {
    api.post(`/memories/:id/${verb}`, async (c) => {
      const b = parsePayload(BODIES[verb], await jsonBody(c), verb);
      const { engine } = bound(c, b.project);
      const { project: _p, ...rest } = b;
      const [r] = await engine.apply(
        [
          writeOp(verb, { id: c.req.param('id'), ...rest, ...addressed(c) } as WriteInput<
            typeof verb
          >),
        ],
        apiActor(c.get('caller')),
      );
      c.header('ETag', `"${r!.rev}"`);
      if (r!.replayed) c.header('Idempotent-Replayed', 'true');
      return c.json(r);
    });
  }

  api.get('/recall', async (c) => {
    const { engine } = bound(c);
    const r = parsePayload(RecallInput, recallFromQuery(c.req.query()), 'recall');
    return c.json(await engine.recall(r.query, recallOptions(r, apiActor(c.get('caller')))));
  });

  api.get('/proposals', async (c) => {
    const { engine } = bound(c);
    const state = c.req.query('state') ?? 'pending';
    if (!['pending', 'accepted', 'rejected', 'all'].includes(state))
      throw invalid('state must be pending, accepted, rejected or all');
    const proposals = await engine.proposals(state === 'all' ? {} : { state: state as 'pending' });
    return c.json({ proposals });
  });

  api.get('/journal', async (c) => {
    const { engine } = bound(c);
    const q = c.req.query();
    const entries = await engine.log({
      actorKind: q.actor || undefined,
      op: q.op || undefined,
      id: q.id || undefined,
      limit: intParam(q.limit, 'limit', 1000) ?? 100,
      reverse: true,
    });
    // The chain's counts are store-wide (every project's writes): the local caller only.
    const local = c.get('caller').kind === 'local';
    return c.json({ entries, chain: local ? await engine.verifyJournal() : null });
  });

  api.get('/tombstones', async (c) => {
    const { engine } = bound(c);
    return c.json({ tombstones: await engine.tombstones() });
  });

  api.get('/reports', (c) => {
    const { engine } = bound(c);
    return c.json({ reports: servedReports(engine, opts.reportsDir ?? null) });
  });
  api.get('/reports/:name{.+}', async (c) => {
    const { engine } = bound(c);
    return c.text(await servedReport(engine, opts.reportsDir ?? null, c.req.param('name')));
  });

  api.all('*', () => {
    throw new MnemeError('not_found', 'no such API resource', { hint: 'see /api/openapi.json' });
  });
  return api;
}
