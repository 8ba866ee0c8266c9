// The memory browser: search through the real recall path (with the exclusion trace when
// "explain" is on), or browse current memories; filters for project, type, trust, status and
// source freshness. It opens on the project of the directory the server was started in; every
// project is named by its remote or path, with its count of memories (from the engine).
import { html } from 'hono/html';
import { TRUST_LEVELS } from '../../../core/types.js';
import type { ProjectEntry, RecallResponse } from '../../../engine/engine.js';
import { FRESHNESS_FILTERS, STATUS_FILTERS, type MemoryRow } from '../browse.js';
import { badge, day, options, page, qs, type Html } from './layout.js';

export interface BrowserView {
  q: string;
  /** The project shown (its scope id), '' for the global scope only. */
  project: string;
  /** Every project, named and counted, the shown one included. */
  projects: ProjectEntry[];
  /** Active memories in the global scope. */
  globalCount: number;
  types: string[];
  filters: { type?: string; trust?: string; status?: string; freshness?: string };
  explain: boolean;
  recall: RecallResponse | null;
  rows: MemoryRow[] | null;
}

const memLink = (id: string, project: string) => `/m/${id}${qs({ project })}`;
const count = (n: number) => `${n} memor${n === 1 ? 'y' : 'ies'}`;

/** What the page shows: the project (by name, with its id) and the global scope, or global only. */
function viewing(v: BrowserView): Html {
  const p = v.projects.find((x) => x.scope === v.project);
  return p
    ? html`<p id="viewing" class="meta" data-scope="${p.scope}">
        Project <strong>${p.name}</strong>
        <span class="mono">${p.scope}</span> (${count(p.memories)}) and the global scope
        (${count(v.globalCount)})
      </p>`
    : html`<p id="viewing" class="meta" data-scope="global">
        The global scope only (${count(v.globalCount)}); pick a project above to see its memories
      </p>`;
}

/** A memory's scope as a person reads it. */
const scopeName = (v: BrowserView, scope: string) =>
  scope === 'global' ? 'global' : (v.projects.find((p) => p.scope === scope)?.name ?? scope);

export function browserPage(v: BrowserView): Html {
  const f = v.filters;
  const form = html`<form class="filters" method="get" action="/" data-autosubmit>
    <input
      type="search"
      name="q"
      value="${v.q}"
      placeholder="Search memories (the same recall agents use)"
      aria-label="search"
    />
    <select name="project" aria-label="project">
      ${v.projects.map(
        (p) =>
          html`<option value="${p.scope}" ${p.scope === v.project ? 'selected' : ''}>
            ${p.name} · ${count(p.memories)}
          </option>`,
      )}
      <option value="global" ${v.project === '' ? 'selected' : ''}>
        global only · ${count(v.globalCount)}
      </option>
    </select>
    <select name="type" aria-label="type">
      ${options(v.types, f.type, 'any type')}
    </select>
    <select name="trust" aria-label="trust">
      ${options(TRUST_LEVELS, f.trust, 'any trust')}
    </select>
    <select name="status" aria-label="status">
      ${options(STATUS_FILTERS, f.status, 'any status')}
    </select>
    <select name="freshness" aria-label="freshness">
      ${options(FRESHNESS_FILTERS, f.freshness, 'any freshness')}
    </select>
    <label
      ><input type="checkbox" name="explain" value="1" ${v.explain ? 'checked' : ''} /> explain
      (exclusion trace)</label
    >
    <button type="submit">Search</button>
  </form>`;

  let body: Html;
  if (v.recall) {
    const r = v.recall;
    body = html`<p class="meta">${r.results.length} result(s) for “${r.query}”</p>
      ${r.results.length === 0 ? html`<p class="empty">nothing eligible matched</p>` : ''}
      ${r.results.map(
        (x) =>
          html`<div class="result" data-id="${x.id}">
            <div class="abstract"><a href="${memLink(x.id, v.project)}">${x.abstract}</a></div>
            <div class="meta">
              ${badge(x.type, 'type')} ${badge(x.status)} ${badge(x.trust)}
              ${x.freshness !== 'unbound' ? badge(x.freshness) : ''}
              ${x.review === 'pending' ? badge('review pending', 'pending') : ''}
              <span class="mono">${x.handle}</span> · rev ${x.rev} · ${scopeName(v, x.scope)} ·
              valid ${day(x.valid_from)} → ${day(x.valid_to)} · score ${x.score.toFixed(2)}
              ${x.explain ? html` · rank ${x.explain.score} (relevance ${x.explain.relevance}, weight ${x.explain.weight}, recency ${x.explain.recency}, trust ${x.explain.trust})` : ''}
            </div>
          </div>`,
      )}
      ${
        v.explain
          ? html`<h2>Not served, and why</h2>
              <div id="exclusion-trace">
                ${
                  (r.excluded ?? []).length === 0
                    ? html`<p class="empty">no matching memory was excluded</p>`
                    : (r.excluded ?? []).map(
                        (e) =>
                          html`<div class="excluded" data-id="${e.id}">
                            ${badge(e.reason.replace(/_/g, ' '), 'bad')}
                            <a href="${memLink(e.id, v.project)}" class="mono">${e.id}</a> rev
                            ${e.rev}
                            <div>
                              ${e.abstract ?? html`<span class="empty">(text not shown)</span>`}
                            </div>
                            <div class="meta">${e.detail}</div>
                          </div>`,
                      )
                }
              </div>`
          : ''
      }`;
  } else {
    const rows = v.rows ?? [];
    body = html`<p class="meta">
        ${rows.length} memor${rows.length === 1 ? 'y' : 'ies'}, newest first
      </p>
      ${
        rows.length === 0
          ? html`<p class="empty">no memories match these filters</p>`
          : html`<table>
              <thead>
                <tr>
                  <th>memory</th>
                  <th>type</th>
                  <th>status</th>
                  <th>trust</th>
                  <th>freshness</th>
                  <th>recorded</th>
                </tr>
              </thead>
              <tbody>
                ${rows.map(
                  (m) =>
                    html`<tr data-id="${m.id}">
                      <td>
                        <a href="${memLink(m.id, v.project)}">${m.abstract}</a>
                        <div class="meta">
                          <span class="mono">${m.id}</span> · rev ${m.rev} ·
                          ${scopeName(v, m.scope)}
                        </div>
                      </td>
                      <td>${m.type}</td>
                      <td>
                        ${badge(m.status)}${m.quarantine ? badge('quarantined') : ''}${m.review === 'pending' ? badge('pending') : ''}
                      </td>
                      <td>${badge(m.trust)}</td>
                      <td>${badge(m.freshness)}</td>
                      <td>${day(m.recorded_at)}</td>
                    </tr>`,
                )}
              </tbody>
            </table>`
      }`;
  }
  return page(
    'Memories',
    '/',
    html`<h1>Memories</h1>
      ${form}${viewing(v)}${body}`,
  );
}
