// EXPLAIN (ANALYZE, BUFFERS) of the Postgres search's statements (store/postgres/search-rows.ts)
// for given terms on a kept database (e.g. `mneme bench serve --keep`), with the parameters a
// recall binds: the corpus statement, then the candidate statement (eligible, the given terms
// as the match), and the postings statement (the same terms, each idf 1, a cut of 100 from a pool of 400). Run
// after `npm run build`:
//   node scripts/pg-search-explain.mjs postgres://…/db TENANT PROJECT word [word…]
import pg from 'pg';
import { CORPUS, candidatesSql, postingsSql } from '../dist/src/store/postgres/search-rows.js';
import { Params, eligibleSql } from '../dist/src/store/postgres/sql.js';
import { namedProjectScope } from '../dist/src/core/scope.js';

const [url, tenant, project, ...words] = process.argv.slice(2);
if (!url || !tenant || !project || words.length === 0) {
  console.error('usage: node scripts/pg-search-explain.mjs URL TENANT PROJECT word [word…]');
  process.exit(2);
}
const client = new pg.Client({ connectionString: url });
await client.connect();
const explain = async (title, text, values) => {
  const { rows } = await client.query(`EXPLAIN (ANALYZE, BUFFERS) ${text}`, values);
  console.log(`-- ${title}\n${rows.map((r) => r['QUERY PLAN']).join('\n')}\n`);
};
const scope = namedProjectScope(project);
await explain(`corpus: ${words.join(' ')}`, CORPUS, [tenant, words]);
const eligibility = {
  scopes: [scope],
  asOf: new Date().toISOString(),
  knownAt: null,
  minTrust: 'untrusted',
  includeQuarantined: false,
};
const p = new Params();
p.add(tenant);
p.add(words);
p.add([scope]);
eligibleSql(eligibility, p);
await explain(`candidates: ${words.join(' ')}`, candidatesSql(true), p.values);
const { rows: totals } = await client.query(
  'SELECT n_rows, n_tokens FROM fts_totals WHERE tenant_id = $1',
  [tenant],
);
const avg = Number(totals[0]?.n_tokens ?? 0) / Math.max(1, Number(totals[0]?.n_rows ?? 0));
const q = new Params();
for (const v of [
  tenant,
  words,
  words.map(() => 1),
  [4, 1, 2],
  [2.2, 1.2, 0.25, 0.75, avg],
  [scope],
  100,
  400,
])
  q.add(v);
eligibleSql(eligibility, q);
await explain(`postings: ${words.join(' ')}`, postingsSql(), q.values);
await client.end();
