// The page shell (header, navigation) and the small rendering helpers every dashboard page uses.
// hono's html tag escapes every interpolated value; raw HTML is never built from stored text.
import { html } from 'hono/html';
import type { HtmlEscapedString } from 'hono/utils/html';

export type Html = HtmlEscapedString | Promise<HtmlEscapedString>;

const NAV: [string, string][] = [
  ['/', 'Memories'],
  ['/review', 'Review'],
  ['/journal', 'Journal'],
  ['/tombstones', 'Tombstones'],
  ['/reports', 'Reports'],
];

export function page(
  title: string,
  active: string,
  body: Html,
  opts: { csrf?: string } = {},
): Html {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        ${opts.csrf ? html`<meta name="csrf-token" content="${opts.csrf}" />` : ''}
        <title>${title} · mneme</title>
        <link rel="stylesheet" href="/assets/style.css" />
      </head>
      <body>
        <header class="top">
          <a class="brand" href="/">mneme</a>
          <nav>
            ${NAV.map(([href, label]) => html`<a href="${href}" class="${href === active ? 'on' : ''}">${label}</a>`)}
          </nav>
        </header>
        <main>${body}</main>
        <script src="/assets/app.js"></script>
      </body>
    </html>`;
}

export const badge = (text: string, cls = text) => html`<span class="badge ${cls}">${text}</span>`;

export const day = (iso: string | null | undefined) => (iso ? iso.slice(0, 10) : '—');
export const minute = (iso: string | null | undefined) =>
  iso ? iso.slice(0, 16).replace('T', ' ') : '—';

export function options(
  values: readonly string[],
  selected: string | undefined,
  empty: string,
): Html {
  return html`<option value="">${empty}</option>
    ${values.map(
      (v) => html`<option value="${v}" ${v === selected ? 'selected' : ''}>${v}</option>`,
    )}`;
}

/** A query string from the non-empty entries. */
export function qs(params: Record<string, string | undefined | null>): string {
  const u = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v) u.set(k, v);
  const s = u.toString();
  return s ? `?${s}` : '';
}

export function diffBlock(diff: string): Html {
  return html`<pre class="diff">
${diff
      .split('\n')
      .map((l) =>
        l.startsWith('+ ')
          ? html`<span class="add">${l}</span>`
          : l.startsWith('- ')
            ? html`<span class="del">${l}</span>`
            : html`${l} `,
      )}</pre>`;
}
