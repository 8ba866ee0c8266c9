// The store's records: the journal (filter by actor, operation, memory; the chain's status),
// armed tombstones, and the sleep and fsck reports.
import { html } from 'hono/html';
import { shownValue } from '../../../core/tombstone-label.js';
import type { JournalEntry } from '../../../core/journal.js';
import type { Tombstone } from '../../../core/normalize.js';
import type { VerifyReport } from '../../compose.js';
import type { ReportEntry } from '../reports.js';
import { badge, minute, page, type Html } from './layout.js';

export function journalPage(
  entries: JournalEntry[],
  chain: VerifyReport,
  f: { actor?: string; op?: string; id?: string },
): Html {
  const body = html`<h1>Journal</h1>
    <div class="notice ${chain.ok ? 'ok' : 'bad'}" id="chain">
      ${
        chain.ok
          ? html`chain verified: ${chain.entries} entries, head #${chain.head.seq}
              <span class="mono">${chain.head.hash.slice(0, 16)}</span>`
          : html`chain BROKEN at
            ${chain.firstBad?.seq !== null && chain.firstBad?.seq !== undefined ? `entry #${chain.firstBad.seq}` : `line ${chain.firstBad?.position}`}:
            ${chain.firstBad?.problem}`
      }
    </div>
    <form class="filters" method="get" action="/journal">
      <input
        type="text"
        name="actor"
        value="${f.actor ?? ''}"
        placeholder="actor (human, agent…)"
        aria-label="actor"
      />
      <input
        type="text"
        name="op"
        value="${f.op ?? ''}"
        placeholder="op (remember, decide…)"
        aria-label="op"
      />
      <input
        type="text"
        name="id"
        value="${f.id ?? ''}"
        placeholder="memory id"
        aria-label="memory"
      />
      <button type="submit">Filter</button>
    </form>
    ${
      entries.length === 0
        ? html`<p class="empty">no entries match</p>`
        : html`<table id="journal">
            <thead>
              <tr>
                <th>#</th>
                <th>at</th>
                <th>actor</th>
                <th>op</th>
                <th>target</th>
                <th>reason</th>
              </tr>
            </thead>
            <tbody>
              ${entries.map(
                (e) =>
                  html`<tr
                    data-seq="${e.seq}"
                    data-op="${e.op}"
                    data-actor="${e.actor.kind}/${e.actor.surface ?? ''}"
                  >
                    <td>${e.seq}</td>
                    <td class="mono">${minute(e.at)}</td>
                    <td>
                      ${e.actor.kind}${e.actor.surface ? html`<div class="meta">${e.actor.surface}</div>` : ''}
                    </td>
                    <td>${e.op}</td>
                    <td>
                      ${
                        e.target
                          ? html`<a href="/m/${e.target.id}" class="mono">${e.target.id}</a
                              >${e.after ? ` rev ${e.after.rev}` : ''}
                              <div class="meta">${e.target.scope}</div>`
                          : ''
                      }
                    </td>
                    <td>${e.reason ?? ''}</td>
                  </tr>`,
              )}
            </tbody>
          </table>`
    }`;
  return page('Journal', '/journal', body);
}

export function tombstonesPage(list: readonly Tombstone[]): Html {
  const body = html`<h1>Tombstones</h1>
    <p class="meta">
      Values that were rejected or forgotten. Every write path refuses them; only a person lifts one
      (<code>mneme tombstone lift</code>).
    </p>
    ${
      list.length === 0
        ? html`<p class="empty">no tombstones</p>`
        : html`<table>
            <thead>
              <tr>
                <th>value</th>
                <th>scope</th>
                <th>by</th>
                <th>from</th>
                <th>when</th>
                <th>reason</th>
                <th>key</th>
              </tr>
            </thead>
            <tbody>
              ${list.map(
                (t) =>
                  html`<tr>
                    <td>${shownValue(t)}</td>
                    <td>${t.scope}</td>
                    <td>${t.actor.kind}</td>
                    <td>${t.from_op}</td>
                    <td class="mono">${minute(t.at)}</td>
                    <td>${t.reason ?? ''}</td>
                    <td class="mono">${t.key.slice(0, 12)}</td>
                  </tr>`,
              )}
            </tbody>
          </table>`
    }`;
  return page('Tombstones', '/tombstones', body);
}

export function reportsPage(
  list: ReportEntry[],
  open: { name: string; text: string } | null,
): Html {
  const body = html`<h1>Reports</h1>
    <p class="meta">
      What <code>mneme sleep</code> and <code>mneme fsck</code> wrote under the store’s
      <code>reports/</code>.
    </p>
    ${
      list.length === 0
        ? html`<p class="empty">no reports yet</p>`
        : html`<table>
            <thead>
              <tr>
                <th>report</th>
                <th>kind</th>
                <th>modified</th>
                <th>size</th>
              </tr>
            </thead>
            <tbody>
              ${list.map(
                (r) =>
                  html`<tr>
                    <td><a href="/reports/${r.name}">${r.name}</a></td>
                    <td>${badge(r.kind, 'type')}</td>
                    <td class="mono">${minute(r.modified)}</td>
                    <td>${r.size} B</td>
                  </tr>`,
              )}
            </tbody>
          </table>`
    }
    ${
      open
        ? html`<h2>${open.name}</h2>
            <pre>${open.text}</pre>`
        : ''
    }`;
  return page('Reports', '/reports', body);
}
