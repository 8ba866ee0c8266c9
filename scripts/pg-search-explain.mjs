// EXPLAIN (ANALYZE, BUFFERS) of the Postgres search's statements (store/postgres/search-rows.ts)
// for given terms on a kept database (e.g. `mneme bench serve --keep`), with the parameters a
// recall binds: the corpus statement, then the candidate statement (eligible, the given terms
// as the match). Run after `npm run build`:
//   node scripts/pg-search-explain.mjs postgres://…/db TENANT PROJECT word [word…]
import pg from 'pg';
import { CORPUS, candidatesSql } from '../dist/src/store/postgres/search-rows.js';
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
const p = new Params();
p.add(tenant);
p.add(words);
p.add([scope]);
eligibleSql(
  {
    scopes: [scope],
    asOf: new Date().toISOString(),
    knownAt: null,
    minTrust: 'untrusted',
    includeQuarantined: false,
  },
  p,
);
await explain(`candidates: ${words.join(' ')}`, candidatesSql(true), p.values);
await client.end();
