// CLI options derived from an engine payload schema (engine/payloads.ts): one option per field,
// named after it (`valid_from` → --valid-from), described by the schema's own description. A list
// or a map takes one item per use and is named in the singular: `tags` → --tag, `fields` →
// --field key=value, `links` → --link rel:target. The values collected are turned back into the
// payload and parsed with the same schema every other surface uses, so a bad value gets the same
// refusal on the command line as over MCP or HTTP.
import { Option, type Command } from 'commander';
import { z } from 'zod';
import { MnemeError } from '../../core/errors.js';

const base = (t: z.ZodTypeAny): z.ZodTypeAny =>
  t instanceof z.ZodOptional || t instanceof z.ZodNullable ? base(t.unwrap()) : t;
const kebab = (field: string) => field.replace(/_/g, '-');
const singular = (field: string) => (field.endsWith('s') ? field.slice(0, -1) : field);

/** An integer's text as a number; anything else stays text, for the schema to refuse by field. */
const number = (v: string): number | string => (/^-?\d+$/.test(v) ? Number(v) : v);
const collect =
  <T>(parse: (v: string) => T) =>
  (v: string, prev: T[] | undefined) => [...(prev ?? []), parse(v)];
const keyValue =
  (flag: string) =>
  (v: string, prev: Record<string, string> = {}) => {
    const i = v.indexOf('=');
    if (i <= 0)
      throw new MnemeError('invalid', `${flag} "${v}" is not key=value`, {
        hint: `write ${flag} subject=billing`,
      });
    return { ...prev, [v.slice(0, i).trim()]: v.slice(i + 1) };
  };
/** `a:b` for an object of two fields {first: a, second: b}; other text stays text (refused). */
const pair = (first: string, second: string) => (v: string) => {
  const i = v.indexOf(':');
  return i <= 0 ? v : { [first]: v.slice(0, i), [second]: v.slice(i + 1) };
};

export interface SchemaOptionsConfig {
  /** Fields the command takes another way (a positional argument) or not at all. */
  skip?: string[];
  /** A check on a field's text as it is parsed, so a refusal can name the flag (e.g. dates). */
  parse?: Record<string, (v: string) => unknown>;
}

/**
 * Adds the options of `schema`'s fields to `cmd`; returns the function that turns the parsed
 * option values back into the payload's fields (absent options left out).
 */
export function schemaOptions(
  cmd: Command,
  schema: z.AnyZodObject,
  config: SchemaOptionsConfig = {},
): (values: Record<string, unknown>) => Record<string, unknown> {
  const attributes: [field: string, attribute: string][] = [];
  for (const [field, t] of Object.entries(schema.shape as Record<string, z.ZodTypeAny>)) {
    if (config.skip?.includes(field)) continue;
    const inner = base(t);
    const choices =
      inner instanceof z.ZodEnum ? ` (${(inner.options as string[]).join(', ')})` : '';
    const description = `${t.description ?? field}${choices}${t.isOptional() ? '' : ' (required)'}`;
    const own = config.parse?.[field];
    let option: Option;
    if (inner instanceof z.ZodBoolean) option = new Option(`--${kebab(field)}`, description);
    else if (inner instanceof z.ZodArray) {
      const item = inner.element as z.ZodTypeAny;
      const flag = `--${kebab(singular(field))}`;
      if (item instanceof z.ZodObject) {
        const [first, second] = Object.keys(item.shape as object) as [string, string];
        option = new Option(`${flag} <${first}:${second}>`, `${description} (repeatable)`);
        option.argParser(collect(pair(first, second)));
      } else {
        option = new Option(`${flag} <value>`, `${description} (repeatable)`);
        option.argParser(collect(own ?? ((v: string) => v)));
      }
    } else if (inner instanceof z.ZodRecord) {
      const flag = `--${kebab(singular(field))}`;
      option = new Option(`${flag} <key=value>`, `${description} (repeatable)`);
      option.argParser(keyValue(flag));
    } else {
      const placeholder = inner instanceof z.ZodNumber ? '<n>' : '<text>';
      option = new Option(`--${kebab(field)} ${placeholder}`, description);
      option.argParser(own ?? (inner instanceof z.ZodNumber ? number : (v: string) => v));
    }
    cmd.addOption(option);
    attributes.push([field, option.attributeName()]);
  }
  // A boolean field named no_X is the flag --no-X, which commander keeps as X (true unless
  // given): the payload field is true only when the flag was given.
  const negated = (f: string, v: unknown) =>
    f.startsWith('no_') ? (v === false ? true : undefined) : v;
  return (values) =>
    Object.fromEntries(
      attributes
        .map(([f, a]) => [f, negated(f, values[a])] as const)
        .filter(([, v]) => v !== undefined),
    );
}
