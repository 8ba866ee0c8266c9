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

- A proposal file edited to carry a human-only step cannot be accepted; it can still be rejected.
  (\`adversary-bundle: a proposal file edited to carry a human-only step cannot be accepted, only
  rejected\`)

### An agent in a session (CLI with an agent marker, MCP, hooks)

- It cannot open a proposal with steps of its own: only mneme's maintenance journals a
  \`propose\` op, and not even maintenance can store a human-only step. (\`who may open a
  proposal: an agent cannot open one with steps of its own; maintenance can\`)
- A value forgotten in a project is never served to that project again from global: writing it to
  global from the project is refused (CLI and MCP); written to global from another project it is
  stored and served there, and withheld in the first project from recall, read, the session-start
  hook and MCP. A value forgotten in global is refused in every project. (\`adversary-global\`)
`;
