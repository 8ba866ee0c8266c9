// The dashboard's stylesheet and its one small script, served as files so the Content Security
// Policy can forbid every inline script and style.

export const STYLE = `
:root { --fg:#1f2328; --muted:#656d76; --line:#d0d7de; --bg:#fff; --soft:#f6f8fa; --accent:#0969da;
  --ok:#1a7f37; --warn:#9a6700; --bad:#cf222e; --mono: ui-monospace, SFMono-Regular, Menlo, monospace; }
* { box-sizing: border-box; }
body { margin:0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color:var(--fg); background:var(--bg); }
header.top { display:flex; gap:1.5rem; align-items:center; padding:.7rem 1.5rem; border-bottom:1px solid var(--line); background:var(--soft); }
header.top .brand { font-weight:700; letter-spacing:.02em; color:var(--fg); text-decoration:none; }
header.top nav a { margin-right:1rem; color:var(--muted); text-decoration:none; }
header.top nav a.on { color:var(--fg); font-weight:600; border-bottom:2px solid var(--accent); }
main { max-width:1100px; margin:0 auto; padding:1.2rem 1.5rem 3rem; }
h1 { font-size:1.35rem; margin:.2rem 0 1rem; } h2 { font-size:1.1rem; margin:1.6rem 0 .6rem; }
a { color:var(--accent); }
form.filters { display:flex; flex-wrap:wrap; gap:.5rem; align-items:center; margin-bottom:1rem; }
input[type=search], input[type=text], input[type=password], select, textarea { font:inherit; padding:.35rem .5rem; border:1px solid var(--line); border-radius:6px; background:#fff; }
input[type=search] { flex:1 1 18rem; }
textarea { width:100%; min-height:3rem; }
button { font:inherit; padding:.35rem .9rem; border-radius:6px; border:1px solid var(--line); background:var(--soft); cursor:pointer; }
button.accept { background:var(--ok); color:#fff; border-color:var(--ok); }
button.reject { background:#fff; color:var(--bad); border-color:var(--bad); }
table { border-collapse:collapse; width:100%; font-size:.92rem; }
th, td { text-align:left; padding:.4rem .5rem; border-bottom:1px solid var(--line); vertical-align:top; }
th { color:var(--muted); font-weight:600; font-size:.82rem; text-transform:uppercase; letter-spacing:.03em; }
.badge { display:inline-block; padding:0 .45rem; border-radius:1rem; font-size:.78rem; border:1px solid var(--line); background:var(--soft); color:var(--muted); margin-right:.25rem; white-space:nowrap; }
.badge.active, .badge.accepted, .badge.fresh, .badge.ok { color:var(--ok); border-color:#aceebb; background:#dafbe1; }
.badge.superseded, .badge.pending, .badge.drifted, .badge.claimed { color:var(--warn); border-color:#f5e0a0; background:#fff8c5; }
.badge.retracted, .badge.rejected, .badge.quarantined, .badge.bad, .badge.missing { color:var(--bad); border-color:#ffcecb; background:#ffebe9; }
.badge.confirmed, .badge.verified { color:var(--accent); border-color:#b6e3ff; background:#ddf4ff; }
.result { padding:.7rem 0; border-bottom:1px solid var(--line); }
.result .abstract { font-weight:600; }
.meta { color:var(--muted); font-size:.85rem; }
.mono, code, pre { font-family:var(--mono); font-size:.85rem; }
pre { background:var(--soft); border:1px solid var(--line); border-radius:6px; padding:.7rem; overflow:auto; white-space:pre-wrap; word-break:break-word; }
pre.diff .add { color:var(--ok); background:#dafbe1; display:block; } pre.diff .del { color:var(--bad); background:#ffebe9; display:block; }
.excluded { border-left:3px solid var(--bad); padding:.4rem .8rem; margin:.4rem 0; background:#fff; }
.panel { border:1px solid var(--line); border-radius:8px; padding:1rem; margin:1rem 0; }
.notice { padding:.6rem .9rem; border-radius:6px; margin:.8rem 0; border:1px solid var(--line); background:var(--soft); }
.notice.ok { border-color:#aceebb; background:#dafbe1; } .notice.bad { border-color:#ffcecb; background:#ffebe9; }
.timeline svg { width:100%; height:auto; display:block; } .timeline .valid { fill:#54aeff; } .timeline .tx { fill:#8c959f; } .timeline .cur { fill:var(--ok); }
.timeline text { font: 11px var(--mono); fill:var(--muted); }
.row2 { display:grid; grid-template-columns:1fr 1fr; gap:1rem; }
.msg { border-left:3px solid var(--line); padding:.2rem .7rem; margin:.3rem 0; } .msg .role { color:var(--muted); font-size:.8rem; }
.empty { color:var(--muted); font-style:italic; }
`;

export const SCRIPT = `
// Filters and the explain toggle apply as soon as they change; everything works without it too.
document.querySelectorAll('form[data-autosubmit] select, form[data-autosubmit] input[type=checkbox]').forEach(function (el) {
  el.addEventListener('change', function () { el.form.requestSubmit ? el.form.requestSubmit() : el.form.submit(); });
});
`;
