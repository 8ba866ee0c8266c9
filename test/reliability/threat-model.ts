// The threat model section of docs/reliability.md: what each adversary can and cannot do, each
// sentence backed by a named test. Kept beside the suite that renders the doc, so the claims and
// the cases that prove them change together.
export const THREAT_MODEL = `## Threat model

mneme runs as the user. It does not defend against the user's own account in general: a process
with the user's rights can delete the store. What it promises is narrower and tested: rules hold on
every entry point, tampering is detected, and what only a person may decide is never carried by
data an agent, a bundle or a model can supply.

### A hostile bundle (\`mneme import FILE\`)

- It cannot put a human-only decision in the review queue. A proposal stores only ordinary steps
  its proposer could apply itself (remember, supersede, correct, retract, link); releasing a
  quarantine, raising trust to \`confirmed\` and lifting a tombstone are derived from the
  proposal's kind and targets when a person decides, never read from a stored payload. An import
  re-opens only a conflict over a memory it wrote, in mneme's own shape and words, and drops every
  other bundle proposal with a counted reason. (\`adversary-bundle: an import from an agent
  session writes only into its project and carries no proposal\`)
- It cannot write into another project or into global. Entries for the importing project are
  written; global entries only with \`--global\`; another project's entries are refused, or
  re-scoped into this project with \`--into SCOPE\`; a lineage id already used by another scope is
  refused. Each kind is counted in the report. (\`adversary-bundle: into a fresh store: this
  project is written, others only re-scoped with --into\`)
- Its tombstones are armed in the scopes it writes into; it can only make the store stricter.

### A person deciding a proposal

- \`mneme review\` and the dashboard list, before the decision, every change accepting and
  rejecting will make in plain words ("releases mem_… from quarantine", "raises mem_… to
  confirmed", "arms a tombstone on …"), from the same plan the decision applies; a decision sent
  with the hash of effects that changed since they were shown is refused. (\`adversary-bundle:
  review lists every effect before the decision; accepting releases only what it says\`,
  \`dashboard in Chromium\`)

### A same-user process editing the store's files

- Cutting journal lines (from the tail, several, or from the middle) makes every later write
  refuse — from an agent or a person, over the CLI or MCP, however often it is tried — with the
  first bad entry and \`mneme journal repair\` in the message, until a person repairs it; reads
  keep working. (\`adversary-journal: refuses every write (agent and person, many times) while
  reads keep working; a person repairs it and writes work again\`, \`an agent over MCP is refused
  with the first bad entry and the repair command; before the cut it is not\`)
- Editing or swapping lines, deleting \`journal/HEAD\`, deleting a segment, or editing an older
  segment to the same length is caught the same way; restoring the bytes lets writes through
  again. Deleting \`.state/journal-broken.json\` does not help: the next write checks again.
  (\`every kind of tampering refuses writes; the same store restored takes them again\`, \`a sealed
  segment edited or deleted is caught by the next write\`)
- Removing the entry that set the review passphrase makes decisions refuse (fail closed):
  \`journal/HEAD\` keeps a copy of the passphrase hash, and the repair puts it back and still asks
  for it. (\`cutting the set_passphrase entry refuses decisions (fail closed); the untouched twin
  decides with it; the repair brings it back\`)
- A revision file whose journal entry was removed is served nowhere (recall, read, injection), also
  after \`mneme rebuild\`, and \`fsck\` reports it as an error with the repair path. (\`a remember
  line cut from the middle: that memory is withheld and fsck reports it; the others are served\`)
- A crash between the journal append and the HEAD update still heals. (\`HEAD one entry behind a
  valid tail (a crash between append and HEAD update) heals; behind an edited tail it does not\`,
  \`reliability-crash\`)
- A proposal file edited to carry a human-only step cannot be accepted; it can still be rejected.
  (\`adversary-bundle: a proposal file edited to carry a human-only step cannot be accepted, only
  rejected\`)
- What it **can** still do: rewrite the journal and \`journal/HEAD\` consistently (the chain has
  no secret key), forge a \`journal_repair\` entry, put back an older copy of the whole store, or
  delete the store. Running \`journal repair\` under a fake terminal also needs the review
  passphrase once one is set. The backstop against a consistent rewrite is a backup kept
  elsewhere. On Postgres a database user who deletes or edits the last journal row, or the
  \`set_passphrase\` row, gets writes or decisions refused; a row changed in the middle is found by
  a full check (\`journal verify\`, \`fsck\`), which records it and then refuses writes; a
  revision row whose journal row was deleted is still served there. (\`journal on Postgres: a
  deleted last journal row …\`, \`a deleted set_passphrase row …\`)

### Anyone writing a value that was rejected

- It is refused when respelled: digits of another script (\`every ٩٠ days\`), letters spaced out
  by any separator (\`p a s s w o r d\`, \`s.t.a.g.i.n.g\`), words split or joined
  (\`stag-ing data-base\`, \`stagingdatabase\`), digits and symbols for letters inside words
  (\`5tag1ng databa5e p@$$w0rd\`), and any combination, besides the case, width, look-alike
  letter, invisible character and filler-word variants refused before. (\`adversary-lookalike: in
  the abstract: other scripts, spaced out, split or joined, leetspeak; controls stored and
  recallable\`, the properties in \`normalize.test.ts\`)
- It is refused in the body or a field value under a harmless abstract; only what a write changes
  is read, so a body carried over unchanged passes. (\`in the body (with a harmless abstract) or a
  field: refused; a body with another value is stored\`, \`a body carried over unchanged passes; a
  changed body or field that repeats the value is refused\`)
- A different value is stored: another number in any script (\`every ٣٠ days\`), version, region,
  name or an added negation; a number standing alone is never read as a letter, and two numbers
  are never merged. (same tests, their controls)
- HTML character references (\`&#66;\`, \`&nbsp;\`) and percent-encoding (\`%20\`, doubly
  encoded \`%2520\`) are decoded before matching. (\`adversary-audit: encoded respellings of a
  rejected value are refused; another value is stored\`)
- Not caught, by design or not yet: a full paraphrase in other words, a bare mention of a short
  value inside a longer sentence, the value right after a negation in the same clause, numbers
  written out as words ("ninety"). \`fsck\` re-checks abstracts only.

### An agent in a session (CLI with an agent marker, MCP, hooks)

- It is recognised by any non-empty \`CLAUDECODE\`, \`CLAUDE_CODE*\` or \`CODEX_*\` variable, or
  \`MNEME_AGENT\` other than empty or \`0\`: \`review\`, \`confirm\`, \`journal repair\` and \`ui\`
  refuse, and its CLI writes are journaled as the agent's. A same-user process that clears its
  environment is not detected; the review passphrase is the defence there. (\`adversary-holes:
  agent sessions are recognised by any host variable of the family\`)
- It cannot change a memory a person confirmed: its correct or supersede is held as a conflict
  proposal, its retract or forget is refused, and no tombstone is armed in its name; a person at a
  terminal still can. (\`an agent may propose a change to a confirmed value, never apply it\`)
- It learns nothing about another project: \`recall --explain\` traces only memories it can
  read, and \`status\` counts only its project and global (MCP \`status\` has no journal head;
  HTTP health gives a token holder none). (\`a binding never learns anything about another
  project's memories\`)
- No input file can exhaust memory or hang a command: body files (64 KiB), bundles (256 MiB),
  token files (1 MiB) and stdin are read with a cap; FIFOs and devices are refused. (\`input files
  are read with a cap, and never a FIFO or a device\`)
- A date that does not exist is refused on every surface (CLI, MCP, HTTP), never rolled over.
  (\`a date that does not exist is refused on every surface, never rolled over\`)
- The store flags cannot be bypassed by a command: with \`--db\`/\`--tenant\`, hooks, sleep, the
  distiller, the MCP server and recall all work on that tenant and write nothing to an embedded
  store the flags did not name. (\`adversary-pg-flags: --db/--tenant reach every command\`)

### A hostile model output (the distiller)

- Its lines are parsed against the model's own vocabulary (new, update, supersede, retract,
  skip, lookup): \`confirm\`, \`release\`, \`lift\` or \`propose\` lines are counted as malformed and
  do nothing. A handle that was not on its reconcile sheet (another project's memory, a made-up
  one) is refused, and so is a rejected value. A \`trust\`, \`global\` or \`scope\` field is
  ignored: what it writes is \`claimed\` at most, in the session's project. An injection it writes
  is quarantined and never served to an agent. (\`adversary-model: applies only what a model may
  do, at trust claimed, in the session's project\`, \`human-only verbs, unseen handles and
  rejected values take no effect\`, \`an injection in model output is quarantined and never
  served to an agent\`)
- Its lookups are answered from its reconcile sheet's boundary only (the session's project and
  global, eligible memories): a \`read\` of another project's memory or of a retracted one is
  answered \`not available\` and shows nothing of it, and an operation naming it afterwards is
  refused; only a memory an answer shows joins the sheet. A model that asks for lookups past the
  last round (\`distill.max_rounds\`, default 3) is stopped, and every round is a run the
  runs-per-hour cap counts. (\`distill-lookups: cannot touch a memory it looked up that the
  boundary does not hold; can touch one it does\`, \`a model that asks for a fourth round is
  stopped; its last answer is applied\`)
- On a store whose journal does not verify it applies nothing and keeps its batch for after the
  repair. (\`adversary-journal: keeps its batch in flight instead of dropping it, and applies it
  after the repair\`)

### A program calling the HTTP API

- Its writes are a program's, never a person's: with a token they are recorded as \`agent/http\`,
  without one (any local process, an agent with a shell included) as \`agent/http-local\`, so it
  cannot overturn a confirmed value; it can still write. The dashboard, behind its login ticket,
  is the human surface. (\`adversary-audit: a tokenless local API call cannot overturn a
  confirmed value; it can still write\`)
- A token bound to one project reads global through that project, so a value rejected there is
  withheld from browse, recall, read and history whether or not the request names the project; a
  token bound to several must name one. (\`adversary-audit: browse, recall, read and history:
  withheld for A (with or without project=), served for B\`)
- \`mneme log\` and \`/api/journal\` show an entry without a target (a refusal, a proposal, a
  decision) only to readers of its scope, and the chain's store-wide counts only to the local
  caller. (adversary-audit: "\`mneme log\` shows a refusal only to readers of its scope")

### Any writer, under contention

- A write that reached its journal line is reported as done even when the index is busy or
  locked by another process; the index catches up from the journal on the next open, write or
  read, so a retrying client has no reason to write twice. (\`reliability-concurrency\`, its
  commit-point phase: concurrent CLI writers and \`rebuild\`, and a held index)

- It cannot open a proposal with steps of its own: only mneme's maintenance journals a
  \`propose\` op, and not even maintenance can store a human-only step. (\`who may open a
  proposal: an agent cannot open one with steps of its own; maintenance can\`)
- A value forgotten in a project is never served to that project again from global: writing it to
  global from the project is refused (CLI and MCP); written to global from another project it is
  stored and served there, and withheld in the first project from recall, read, the session-start
  hook and MCP. A value forgotten in global is refused in every project. (\`adversary-global\`)
`;
