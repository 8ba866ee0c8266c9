// The review queue, where a person decides what agents and maintenance proposed: each pending
// proposal with its evidence and diff, and a form to accept or reject it with a reason. Every
// form carries the session's CSRF token, and the passphrase field appears when one is set.
import { html } from 'hono/html';
import type { Proposal } from '../../../core/proposal.js';
import { badge, diffBlock, minute, page, type Html } from './layout.js';

export interface ReviewPlan {
  accept: { effects: string[]; hash: string; blocked: string | null };
  reject: { effects: string[]; hash: string; blocked: string | null };
}

export interface ReviewView {
  pending: Proposal[];
  /** What each decision does, derived now from the plan the decision applies. */
  plans: Map<string, ReviewPlan>;
  decided: Proposal[];
  csrf: string;
  passphrase: boolean;
  notice: { ok: boolean; text: string } | null;
  /** A scope as a person reads it (global, or the project's remote or path). */
  scopeName: (scope: string) => string;
}

const targetLink = (t: string) =>
  t.startsWith('mem_')
    ? html`<a href="/m/${t}" class="mono">${t}</a>`
    : html`<span class="mono">${t}</span>`;

/** Every change each decision makes, in plain words, before the person decides. */
function effectsBlock(plan: ReviewPlan | undefined): Html | string {
  if (!plan) return '';
  const side = (name: string, s: ReviewPlan['accept']) =>
    html`<div class="effects" data-decision="${name}">
      <div class="meta">${name === 'accept' ? 'Accepting' : 'Rejecting'} will:</div>
      ${
        s.blocked
          ? html`<p class="notice bad">not possible: ${s.blocked}</p>`
          : html`<ul>
              ${s.effects.map((e) => html`<li>${e}</li>`)}
            </ul>`
      }
    </div>`;
  return html`${side('accept', plan.accept)}${side('reject', plan.reject)}`;
}

export function reviewPage(v: ReviewView): Html {
  const body = html`<h1>Review queue</h1>
    ${v.notice ? html`<div class="notice ${v.notice.ok ? 'ok' : 'bad'}" id="notice">${v.notice.text}</div>` : ''}
    <p class="meta">
      Agents and maintenance propose; you decide. Each proposal lists every change accepting or
      rejecting will make, derived now from its kind and targets; that is exactly what is applied,
      through the write path; rejecting a proposed value keeps it from coming back. Decisions are
      journaled as human / dashboard.
    </p>
    ${v.pending.length === 0 ? html`<p class="empty">nothing is waiting for a decision</p>` : ''}
    ${v.pending.map(
      (p) =>
        html`<article class="panel proposal" data-id="${p.id}">
          <div>${badge(p.kind, 'pending')} <strong>${p.summary}</strong></div>
          <p class="meta">
            <span class="mono">${p.id}</span> ·
            <span class="scope" title="${p.scope}">${v.scopeName(p.scope)}</span> · by
            ${p.created_by.kind}${p.created_by.surface ? `/${p.created_by.surface}` : ''} ·
            ${minute(p.created_at)} · targets ${p.targets.map(targetLink)}
          </p>
          ${
            p.evidence.length
              ? html`<div class="meta">evidence:</div>
                  <ul>
                    ${p.evidence.map((e) => html`<li>${targetLink(e)}</li>`)}
                  </ul>`
              : ''
          }
          ${effectsBlock(v.plans.get(p.id))} ${p.diff ? diffBlock(p.diff) : ''}
          <form method="post" action="/review/${p.id}">
            <input type="hidden" name="csrf" value="${v.csrf}" />
            <input
              type="hidden"
              name="effects_accept"
              value="${v.plans.get(p.id)?.accept.hash ?? ''}"
            />
            <input
              type="hidden"
              name="effects_reject"
              value="${v.plans.get(p.id)?.reject.hash ?? ''}"
            />
            <label
              >Reason <textarea name="reason" placeholder="why (kept in the journal)"></textarea>
            </label>
            ${v.passphrase ? html`<label>Review passphrase <input type="password" name="passphrase" autocomplete="off" required /></label>` : ''}
            <p>
              <button class="accept" name="decision" value="accept">Accept</button>
              <button class="reject" name="decision" value="reject">Reject</button>
            </p>
          </form>
        </article>`,
    )}
    <h2>Recently decided</h2>
    ${
      v.decided.length === 0
        ? html`<p class="empty">no decisions yet</p>`
        : html`<table>
            <thead>
              <tr>
                <th>proposal</th>
                <th>kind</th>
                <th>decision</th>
                <th>by</th>
                <th>when</th>
                <th>reason</th>
              </tr>
            </thead>
            <tbody>
              ${v.decided.map(
                (p) =>
                  html`<tr data-id="${p.id}">
                    <td>
                      ${p.summary}
                      <div class="meta mono">${p.id}</div>
                    </td>
                    <td>${p.kind}</td>
                    <td>${badge(p.state)}</td>
                    <td>
                      ${p.decided_by?.kind ?? ''}${p.decided_by?.surface ? `/${p.decided_by.surface}` : ''}
                    </td>
                    <td class="mono">${minute(p.decided_at)}</td>
                    <td>${p.reason ?? ''}</td>
                  </tr>`,
              )}
            </tbody>
          </table>`
    }`;
  return page('Review', '/review', body, { csrf: v.csrf });
}
