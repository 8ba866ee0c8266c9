// The process the fsck resume test kills: `mneme fsck --fix` as the CLI runs it (an engine from
// the composition root, for the store of $MNEME_HOME and the project of the working directory),
// with a fault hook installed from the test side through the engine's `afterFix` seam — the
// product never sets it. It dies by SIGKILL after the <after>-th fix, before that fix's
// checkpoint. `node fsck-fix-child.js <after> <issue id>...`
import { openEngine } from '../../src/surfaces/compose.js';

const [afterText, ...ids] = process.argv.slice(2);
const after = Number(afterText);
if (!Number.isInteger(after) || after < 1 || ids.length === 0) {
  process.stderr.write('usage: fsck-fix-child.js <after (1..)> <issue id>...\n');
  process.exit(2);
}
const engine = await openEngine({ cwd: process.cwd() });
const fixes = await engine.fsckFix(ids, {
  afterFix: (n) => {
    if (n === after) process.kill(process.pid, 'SIGKILL');
  },
});
process.stdout.write(`${JSON.stringify({ fixes })}\n`);
await engine.close();
