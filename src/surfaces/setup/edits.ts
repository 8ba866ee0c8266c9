// Pure edits of host settings documents: add or remove mneme's MCP server entry and hook
// commands without touching anything else. Each edit is idempotent (applying it to its own output
// changes nothing) and its removal takes away exactly what it added.

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
export type JsonObject = { [k: string]: Json };

export const SERVER_NAME = 'mneme';

export interface HookSpec {
  /** The host's event name, e.g. PreToolUse. */
  hostEvent: string;
  /** The mneme hook event, e.g. pre-tool-use. */
  event: string;
  matcher?: string;
  command: string;
  timeout: number;
}

const isObject = (v: Json | undefined): v is JsonObject =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

const sameJson = (a: Json | undefined, b: Json | undefined) =>
  JSON.stringify(a) === JSON.stringify(b);

/** A hook command that runs `mneme hook <event>` (any way of invoking mneme). */
const OUR_HOOK = /(^|[\s"'/\\])mneme(\.js)?["']?\s+hook\s+([a-z-]+)/;
export const ourHookEvent = (command: unknown): string | null =>
  typeof command === 'string' ? (OUR_HOOK.exec(command)?.[3] ?? null) : null;

export function setMcpServer(doc: JsonObject, key: string, entry: JsonObject): boolean {
  const servers = isObject(doc[key]) ? doc[key] : {};
  if (sameJson(servers[SERVER_NAME], entry)) return false;
  doc[key] = { ...servers, [SERVER_NAME]: entry };
  return true;
}

/** Removes our server entry; drops the container only if it is left empty. */
export function removeMcpServer(doc: JsonObject, key: string): boolean {
  const servers = doc[key];
  if (!isObject(servers) || !(SERVER_NAME in servers)) return false;
  const { [SERVER_NAME]: _ours, ...rest } = servers;
  if (Object.keys(rest).length === 0) delete doc[key];
  else doc[key] = rest;
  return true;
}

type Group = { matcher?: string; hooks: JsonObject[] } & JsonObject;

function groupsOf(hooks: JsonObject, hostEvent: string): Group[] {
  const v = hooks[hostEvent];
  return Array.isArray(v) ? (v.filter(isObject) as Group[]) : [];
}

/** Ensures exactly one group per spec runs our command; leaves every other hook alone. */
export function setHooks(doc: JsonObject, specs: HookSpec[]): boolean {
  const hooks: JsonObject = isObject(doc.hooks) ? { ...doc.hooks } : {};
  let changed = false;
  for (const spec of specs) {
    const groups = groupsOf(hooks, spec.hostEvent);
    const ours = groups.flatMap((g) =>
      (Array.isArray(g.hooks) ? g.hooks : [])
        .filter((h) => ourHookEvent(h.command) === spec.event)
        .map((h) => ({ g, h })),
    );
    const want: JsonObject = { type: 'command', command: spec.command, timeout: spec.timeout };
    if (
      ours.length === 1 &&
      sameJson(ours[0]!.h, want) &&
      (ours[0]!.g.matcher ?? null) === (spec.matcher ?? null)
    )
      continue;
    const kept = stripOurs(groups, (e) => e === spec.event);
    const group: JsonObject = spec.matcher !== undefined ? { matcher: spec.matcher } : {};
    group.hooks = [want];
    hooks[spec.hostEvent] = [...kept, group];
    changed = true;
  }
  if (changed) doc.hooks = hooks;
  return changed;
}

/** Removes every `mneme hook …` command; drops groups, events and `hooks` left empty. */
export function removeHooks(doc: JsonObject): boolean {
  if (!isObject(doc.hooks)) return false;
  const hooks: JsonObject = { ...doc.hooks };
  let changed = false;
  for (const hostEvent of Object.keys(hooks)) {
    const groups = groupsOf(hooks, hostEvent);
    if (groups.length === 0) continue;
    const kept = stripOurs(groups, () => true);
    if (sameJson(kept, hooks[hostEvent])) continue;
    changed = true;
    if (kept.length === 0) delete hooks[hostEvent];
    else hooks[hostEvent] = kept;
  }
  if (!changed) return false;
  if (Object.keys(hooks).length === 0) delete doc.hooks;
  else doc.hooks = hooks;
  return true;
}

function stripOurs(groups: Group[], which: (event: string) => boolean): Group[] {
  const out: Group[] = [];
  for (const g of groups) {
    if (!Array.isArray(g.hooks)) {
      out.push(g);
      continue;
    }
    const rest = g.hooks.filter((h) => {
      const e = ourHookEvent(isObject(h) ? h.command : undefined);
      return e === null || !which(e);
    });
    if (rest.length === g.hooks.length) out.push(g);
    else if (rest.length > 0) out.push({ ...g, hooks: rest });
  }
  return out;
}

/** Which of the given specs are wired (our command present under the right host event). */
export function wiredEvents(doc: JsonObject, specs: HookSpec[]): Map<string, boolean> {
  const out = new Map<string, boolean>();
  const hooks = isObject(doc.hooks) ? doc.hooks : {};
  for (const s of specs) {
    const found = groupsOf(hooks, s.hostEvent).some(
      (g) =>
        Array.isArray(g.hooks) &&
        g.hooks.some((h) => isObject(h) && ourHookEvent(h.command) === s.event),
    );
    out.set(s.event, found);
  }
  return out;
}
