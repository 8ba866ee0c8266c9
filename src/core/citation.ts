// Citation handles: injected lines carry `[mem:ID]`; an agent that relies on a memory cites it
// the same way, and the Stop hook parses handles back out of the transcript as usage events.
const HANDLE = /\[mem:(mem_[0-9A-HJKMNP-TV-Z]{26})\]/g;

export function citedIds(text: string): string[] {
  const out = new Set<string>();
  for (const m of text.matchAll(HANDLE)) out.add(m[1]!);
  return [...out];
}
