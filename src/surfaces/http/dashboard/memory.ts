// One memory: its current value, every revision (lineage), a diff between any two revisions,
// the validity and transaction timelines, and provenance. A `session:` pointer links to the
// trace page, which shows the archived transcript lines it cites.
import { html } from 'hono/html';
import { textDiff } from '../../../core/text-diff.js';
import type { TraceReport } from '../../../engine/engine.js';
import { badge, diffBlock, minute, page, qs, type Html } from './layout.js';

type Revision = {
  rev: number;
  op: string;
  abstract: string;
  body: string;
  status: string;
  trust: string;
  valid_from: string;
  valid_to: string | null;
  recorded_at: string;
  retired_at: string | null;
  actor: { kind: string; surface?: string; session?: string };
  reason: string | null;
  fields: Record<string, string>;
  provenance: string[];
};

export interface MemoryView {
  id: string;
  scope: string;
  /** The scope as a person reads it: global, or the project's remote or path. */
  scopeName: string;
  type: string;
  handle: string;
  quarantine: string | null;
  review: string;
  tags: string[];
  source: { path: string; sha256: string } | null;
  /** The artifact kept beside the current revision, when it is still served. */
  artifact?: { name: string; size: number; sha256: string; media_type: string } | null;
  revisions: Revision[];
  a: number | null;
  b: number | null;
  now: string;
}

const show = (r: Revision) => (r.body ? `${r.abstract}\n\n${r.body}` : r.abstract);

/** Two bars per revision on one time axis: validity (world time) and transaction (store time). */
function timeline(revs: Revision[], now: string): Html {
  const t = (s: string) => Date.parse(s);
  const times = revs.flatMap((r) => [t(r.valid_from), t(r.recorded_at)]).filter(Number.isFinite);
  const end = t(now);
  const start = Math.min(...times, end);
  const span = Math.max(end - start, 1);
  const W = 1000;
  const L = 70;
  const x = (ms: number) => L + ((ms - start) / span) * (W - L - 10);
  const rowH = 34;
  return html`<div class="timeline">
    <svg
      viewBox="0 0 ${W} ${revs.length * rowH + 24}"
      role="img"
      aria-label="validity and transaction timelines"
    >
      ${revs.map((r, i) => {
        const y = i * rowH + 4;
        const vf = x(t(r.valid_from));
        const vt = x(r.valid_to ? t(r.valid_to) : end);
        const rf = x(t(r.recorded_at));
        const rt = x(r.retired_at ? t(r.retired_at) : end);
        return html`<text x="0" y="${y + 12}">rev ${r.rev}</text>
          <rect class="valid" x="${vf}" y="${y}" width="${Math.max(vt - vf, 2)}" height="12" rx="2"
            ><title>valid ${r.valid_from} → ${r.valid_to ?? 'now'}</title></rect
          >
          <rect
            class="${r.retired_at ? 'tx' : 'cur'}"
            x="${rf}"
            y="${y + 15}"
            width="${Math.max(rt - rf, 2)}"
            height="12"
            rx="2"
            ><title>recorded ${r.recorded_at} → ${r.retired_at ?? 'current'}</title></rect
          >`;
      })}
      <text x="${L}" y="${revs.length * rowH + 18}">${minute(new Date(start).toISOString())}</text>
      <text x="${W - 140}" y="${revs.length * rowH + 18}">now ${minute(now)}</text>
    </svg>
    <p class="meta">
      Blue: when the fact held in the world (validity). Green/grey: when the store held the revision
      as current (transaction time).
    </p>
  </div>`;
}

function pointer(p: string, id: string, rev: number, project: string): Html {
  if (p.startsWith('session:'))
    return html`<a href="/m/${id}/trace${qs({ project })}#rev-${rev}" class="mono">${p}</a>`;
  return html`<span class="mono">${p}</span>`;
}

export function memoryPage(v: MemoryView, project: string): Html {
  const cur = v.revisions[v.revisions.length - 1]!;
  const revs = v.revisions.map((r) => r.rev);
  const a = v.revisions.find((r) => r.rev === v.a);
  const b = v.revisions.find((r) => r.rev === v.b);
  const diff =
    a && b
      ? html`<h2>Diff rev ${a.rev} → rev ${b.rev}</h2>
          ${diffBlock(textDiff(show(a), show(b)))}`
      : '';
  const revOptions = (sel: number | null) =>
    revs.map((n) => html`<option value="${n}" ${n === sel ? 'selected' : ''}>rev ${n}</option>`);
  const body = html`<h1>${cur.abstract}</h1>
    <p class="meta">
      ${badge(v.type, 'type')} ${badge(cur.status)} ${badge(cur.trust)}
      ${v.quarantine ? badge(`quarantined: ${v.quarantine}`, 'quarantined') : ''}
      ${v.review === 'pending' ? badge('review pending', 'pending') : ''}
      <span class="mono">${v.handle}</span> ·
      <span class="scope" title="${v.scope}">${v.scopeName}</span> · rev ${cur.rev} ·
      <a href="/journal${qs({ id: v.id })}">journal</a> ·
      <a href="/m/${v.id}/trace${qs({ project })}">trace</a>
    </p>
    ${cur.body ? html`<pre class="body">${cur.body}</pre>` : ''}
    ${Object.keys(cur.fields).length ? html`<p class="meta">fields: ${Object.entries(cur.fields).map(([k, val]) => html`<code>${k}=${val}</code> `)}</p>` : ''}
    ${v.tags.length ? html`<p class="meta">tags: ${v.tags.map((t) => badge(t, 'tag'))}</p>` : ''}
    ${v.artifact ? html`<p class="meta">artifact: <a href="/m/${v.id}/artifact${qs({ project })}" download>${v.artifact.name}</a> (${v.artifact.size} bytes, ${v.artifact.media_type}) <code>${v.artifact.sha256.slice(0, 12)}</code></p>` : ''}
    ${v.source ? html`<p class="meta">source: <code>${v.source.path}</code> @ <code>${v.source.sha256.slice(0, 12)}</code></p>` : ''}
    <h2>Timelines</h2>
    ${timeline(v.revisions, v.now)}
    <h2>Lineage (${v.revisions.length} revision${v.revisions.length === 1 ? '' : 's'})</h2>
    <table id="lineage">
      <thead>
        <tr>
          <th>rev</th>
          <th>op</th>
          <th>status</th>
          <th>trust</th>
          <th>valid</th>
          <th>recorded → retired</th>
          <th>by</th>
          <th>abstract</th>
        </tr>
      </thead>
      <tbody>
        ${v.revisions.map(
          (r) =>
            html`<tr id="rev-${r.rev}" data-rev="${r.rev}">
              <td>${r.rev}</td>
              <td>${r.op}</td>
              <td>${badge(r.status)}</td>
              <td>${badge(r.trust)}</td>
              <td class="mono">${minute(r.valid_from)} → ${minute(r.valid_to)}</td>
              <td class="mono">${minute(r.recorded_at)} → ${minute(r.retired_at)}</td>
              <td>
                ${r.actor.kind}${r.actor.surface ? html`<div class="meta">${r.actor.surface}</div>` : ''}
              </td>
              <td>
                ${r.abstract}${r.reason ? html`<div class="meta">reason: ${r.reason}</div>` : ''}
                ${r.provenance.length ? html`<div class="meta">from ${r.provenance.map((p) => pointer(p, v.id, r.rev, project))}</div>` : ''}
              </td>
            </tr>`,
        )}
      </tbody>
    </table>
    ${
      revs.length > 1
        ? html`<form class="filters" method="get" action="/m/${v.id}" data-autosubmit>
            ${project ? html`<input type="hidden" name="project" value="${project}" />` : ''}
            <label
              >compare
              <select name="a" aria-label="from revision">
                ${revOptions(v.a)}
              </select></label
            >
            <label
              >with
              <select name="b" aria-label="to revision">
                ${revOptions(v.b)}
              </select></label
            >
            <button type="submit">Diff</button>
          </form>`
        : ''
    }
    <div id="diff">${diff}</div>`;
  return page(cur.abstract.slice(0, 60), '/', body);
}

export function tracePage(t: TraceReport, project: string): Html {
  const body = html`<h1>
      Trace of <a href="/m/${t.id}${qs({ project })}" class="mono">${t.id}</a>
    </h1>
    ${t.revisions.map(
      (r) =>
        html`<div class="panel" id="rev-${r.rev}">
          <strong>rev ${r.rev}</strong> ${r.op} ${badge(r.status)} ${badge(r.trust)}
          <span class="meta"
            >by ${r.actor.kind}${r.actor.session ? ` (session ${r.actor.session})` : ''} ·
            ${minute(r.recorded_at)}</span
          >
          <div>${r.abstract}</div>
          ${r.provenance.length === 0 ? html`<p class="empty">no provenance recorded</p>` : ''}
          ${r.provenance.map(
            (p) =>
              html`<div class="meta">← <span class="mono">${p.pointer}</span></div>
                ${p.session?.missing ? html`<p class="empty">${p.session.missing}</p>` : ''}
                ${(p.session?.messages ?? []).map(
                  (m) =>
                    html`<div class="msg">
                      <div class="role">line ${m.line} · ${m.role}</div>
                      ${m.text}
                    </div>`,
                )}`,
          )}
        </div>`,
    )}
    <h2>Journal</h2>
    <table>
      <thead>
        <tr>
          <th>#</th>
          <th>at</th>
          <th>actor</th>
          <th>op</th>
          <th>rev</th>
          <th>reason</th>
        </tr>
      </thead>
      <tbody>
        ${t.journal.map(
          (e) =>
            html`<tr>
              <td>${e.seq}</td>
              <td class="mono">${minute(e.at)}</td>
              <td>${e.actor.kind}</td>
              <td>${e.op}</td>
              <td>${e.rev ?? ''}</td>
              <td>${e.reason ?? ''}</td>
            </tr>`,
        )}
      </tbody>
    </table>`;
  return page(`Trace ${t.id}`, '/', body);
}
