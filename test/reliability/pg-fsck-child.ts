// The process the Postgres fsck resume test kills: `mneme fsck` as the CLI runs it (an engine
// from the composition root, for the database and tenant of $MNEME_DATABASE_URL and
// $MNEME_TENANT). No hook: the test holds a lock its second checkpoint waits on, and kills it
// there with SIGKILL. `node pg-fsck-child.js`
import { openEngine } from '../../src/surfaces/compose.js';

const engine = await openEngine({ cwd: process.cwd() });
const report = await engine.fsck();
process.stdout.write(`${JSON.stringify({ checked: report.checked, issues: report.issues })}\n`);
await engine.close();
