// Loading the settings: the one module that reads mneme's environment variables. Precedence,
// per setting: flag > environment > config file > default. The config file is `--config FILE`,
// else $MNEME_CONFIG, else config.toml in the embedded store's directory; it is parsed with
// smol-toml (loaded only when a file exists, so a hook without one pays nothing) and validated
// with zod: an unknown key, a bad value or a bad environment value is refused, never ignored.
// The store's own config.toml cannot choose the store (it is found through the store).
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import type { z } from 'zod';
import { MnemeError } from '../../core/errors.js';
import { looksLikeUrl, redactUrl } from '../../core/redact.js';
import { readInputFile } from '../input-file.js';
import {
  CONFIG_FILE_SETTING,
  expected,
  fromText,
  isValid,
  SETTING_LIST,
  SETTINGS,
  settingByKey,
  type KindSpec,
  type SettingDef,
  type Settings,
} from './schema.js';

export type { Settings } from './schema.js';

export type Source =
  | { kind: 'default' }
  | { kind: 'file'; path: string }
  | { kind: 'env'; name: string }
  | { kind: 'flag'; name: string };

/** The flags that name a setting, as commands receive them (all optional). */
export interface SettingFlags {
  config?: string;
  store?: string;
  db?: string;
  tenant?: string;
  embedder?: string;
  executor?: string;
  command?: string;
}

const FLAG_KEYS: Record<Exclude<keyof SettingFlags, 'config'>, string> = {
  store: 'store.home',
  db: 'store.database_url',
  tenant: 'store.tenant',
  embedder: 'embed.embedder',
  executor: 'distill.executor',
  command: 'distill.command',
};

export type StoreTarget =
  { kind: 'files'; root: string } | { kind: 'postgres'; url: string; tenant: string };

export interface LoadedSettings {
  settings: Settings;
  /** Where each setting's value came from, by key. */
  sources: Record<string, Source>;
  /** The config file read, and what named it; null when there is none. */
  file: { path: string; source: Source } | null;
  /** Which kind of store the settings select. */
  storeKind: StoreTarget['kind'];
  /** The store to open (refuses a Postgres store without a tenant). */
  target(): StoreTarget;
}

export const DOCS_HINT = 'see docs/configuration.md';

type Layer = Map<string, { value: unknown; source: Source }>;

// ---- values -----------------------------------------------------------------------------------

const shown = (v: unknown) => (typeof v === 'string' ? JSON.stringify(v) : String(v));

function checkValue(d: SettingDef, raw: unknown, what: () => string, hint: string): unknown {
  if (isValid(d.kind.spec, raw)) return raw;
  throw new MnemeError('invalid', `${what()}: expected ${expected(d.kind.spec)}`, {
    hint,
    details: { key: d.key },
  });
}

function envLayer(env: NodeJS.ProcessEnv, only?: (d: SettingDef) => boolean): Layer {
  const layer: Layer = new Map();
  for (const d of SETTING_LIST) {
    if (only && !only(d)) continue;
    const v = env[d.env];
    if (v === undefined || v === '') continue; // an empty variable is an unset one
    const value = checkValue(
      d,
      fromText(d.kind.spec, v),
      () => `${d.env}=${d.secret ? '(hidden)' : shown(v)} is not a valid ${d.key}`,
      `fix or unset ${d.env} (${DOCS_HINT})`,
    );
    layer.set(d.key, { value, source: { kind: 'env', name: d.env } });
  }
  return layer;
}

function flagLayer(flags: SettingFlags): Layer {
  const layer: Layer = new Map();
  for (const [flag, key] of Object.entries(FLAG_KEYS)) {
    const v = flags[flag as keyof typeof FLAG_KEYS];
    if (v === undefined) continue;
    const d = settingByKey.get(key)!;
    const value = checkValue(
      d,
      fromText(d.kind.spec, v),
      () => `${d.flag} ${shown(v)} is not valid`,
      `run \`mneme --help\` (${DOCS_HINT})`,
    );
    layer.set(key, { value, source: { kind: 'flag', name: d.flag! } });
  }
  return layer;
}

// ---- the config file --------------------------------------------------------------------------

// zod and smol-toml are required only when a config file is read: a hook or a recall without
// one loads neither (require, not import(): the CLI bundle has no dynamic-import loader).
const lazy = createRequire(import.meta.url);
let zod: typeof import('zod') | undefined;
let toml: typeof import('smol-toml') | undefined;
let fileSchema: z.ZodTypeAny | undefined;

/** One value's zod schema, built from its kind (isValid states the same rule). */
export function zodLeaf(k: KindSpec): z.ZodTypeAny {
  const { z } = (zod ??= lazy('zod') as typeof import('zod'));
  switch (k.type) {
    case 'int':
    case 'number': {
      let n = k.type === 'int' ? z.number().int() : z.number().finite();
      if (k.min !== undefined) n = n.min(k.min);
      if (k.max !== undefined) n = n.max(k.max);
      return n;
    }
    case 'bool':
      return z.boolean();
    case 'string':
      return z.string().min(1);
    case 'enum':
      return z.enum(k.values);
  }
}

/** The file's shape: strict tables of optional values, so an unknown key is an issue. */
function schemaOfFile(): z.ZodTypeAny {
  if (fileSchema) return fileSchema;
  const { z } = (zod ??= lazy('zod') as typeof import('zod'));
  return (fileSchema = z
    .object(
      Object.fromEntries(
        Object.entries(SETTINGS).map(([section, defs]) => [
          section,
          z
            .object(
              Object.fromEntries(
                Object.entries(defs).map(([name, d]) => [
                  name,
                  zodLeaf((d as SettingDef).kind.spec).optional(),
                ]),
              ),
            )
            .strict()
            .optional(),
        ]),
      ),
    )
    .strict());
}

function problemOf(issue: z.ZodIssue, data: unknown): string {
  const at = issue.path.join('.');
  if (issue.code === 'unrecognized_keys') {
    const section = issue.path[0] as keyof typeof SETTINGS | undefined;
    const known = section
      ? Object.keys(SETTINGS[section]).join(', ')
      : Object.keys(SETTINGS).join(', ');
    return issue.keys
      .map(
        (k) =>
          `unknown key "${at ? `${at}.` : ''}${k}" (known ${section ? `in [${section}]` : 'tables'}: ${known})`,
      )
      .join('; ');
  }
  if (issue.path.length === 1) return `[${at}] must be a table of settings`;
  const d = settingByKey.get(at);
  const value = issue.path.reduce<unknown>(
    (o, k) => (o && typeof o === 'object' ? (o as Record<string, unknown>)[k] : undefined),
    data,
  );
  const given = d?.secret ? '(hidden)' : shown(value instanceof Object ? String(value) : value);
  return d
    ? `${at} = ${given} is not valid: expected ${expected(d.kind.spec)}`
    : `${at}: ${issue.message}`;
}

/** Keys the file may not hold wherever it is (secrets) or as the store's own file (the store). */
function placeProblems(data: unknown, storeFile: boolean): string[] {
  const out: string[] = [];
  if (!data || typeof data !== 'object') return out;
  for (const [section, values] of Object.entries(data)) {
    if (!values || typeof values !== 'object') continue;
    for (const name of Object.keys(values)) {
      const d = settingByKey.get(`${section}.${name}`);
      if (d?.where === 'env')
        out.push(
          `${d.key} cannot be set in a config file: set ${d.env} in the environment instead`,
        );
      else if (d?.where === 'no-store-file' && storeFile)
        out.push(
          `${d.key} cannot be set in the store's own config.toml (a store cannot choose itself): pass ${d.flag}, set ${d.env}, or put it in a file given by --config / MNEME_CONFIG`,
        );
    }
  }
  return out;
}

/** Reads and validates one config file: its values by key (never partially applied). */
function fileLayer(file: string, storeFile: boolean, source: Source): Layer {
  const text = readConfig(file, source);
  // The store's own file, unchanged since it was last validated: its checked values, without
  // loading the TOML parser and zod again (a hook is a whole process; they cost it ~20 ms).
  const checked = storeFile ? checkedCopy(file, text) : null;
  const hit = checked?.read();
  if (hit) return hit;
  const layer = validateFile(file, text, storeFile);
  checked?.write(layer);
  return layer;
}

/** The most a config file may hold (a settings file is a few hundred bytes). */
export const CONFIG_FILE_CAP = 1024 * 1024;

function readConfig(file: string, source: Source): string {
  const hint = `check the path${source.kind === 'flag' ? ' given to --config' : source.kind === 'env' ? ` in ${source.name}` : ''} (${DOCS_HINT})`;
  if (!fs.existsSync(file))
    throw new MnemeError('invalid', `cannot read the config file ${file}: it does not exist`, {
      hint,
    });
  // A regular file, read with a cap: a FIFO would hang every command and hook (before any
  // timeout is armed) and /dev/zero would fill memory.
  return readInputFile(file, { cap: CONFIG_FILE_CAP, what: 'the config file' }).toString('utf8');
}

function validateFile(file: string, text: string, storeFile: boolean): Layer {
  toml ??= lazy('smol-toml') as typeof import('smol-toml');
  let data: unknown;
  try {
    data = toml.parse(text);
  } catch (e) {
    // Where and why, never the line itself: it may hold a password or a key, and this message
    // reaches terminals, the hook log and an agent's context.
    const t = e as { message?: string; line?: number; column?: number };
    const why = String(t.message ?? e)
      .split('\n')[0]!
      .replace(/^Invalid TOML document: /, '');
    const at = Number.isInteger(t.line) ? ` at line ${t.line}, column ${t.column}` : '';
    throw new MnemeError('invalid', `${file} is not valid TOML${at}: ${why}`, {
      hint: `fix the file (${DOCS_HINT})`,
    });
  }
  const r = schemaOfFile().safeParse(data);
  const problems = [
    ...(r.success ? [] : r.error.issues.map((i) => problemOf(i, data))),
    ...placeProblems(data, storeFile),
  ];
  const layer: Layer = new Map();
  if (r.success) {
    for (const [section, values] of Object.entries(r.data as Record<string, object>)) {
      for (const [name, value] of Object.entries(values ?? {})) {
        if (value === undefined) continue;
        const d = settingByKey.get(`${section}.${name}`)!;
        layer.set(d.key, {
          value: d.key === 'store.home' ? resolveHome(value as string, path.dirname(file)) : value,
          source: { kind: 'file', path: file },
        });
      }
    }
  }
  if (problems.length)
    throw new MnemeError('invalid', `config file ${file}: ${problems.join('; ')}`, {
      hint: `fix or remove the key (${DOCS_HINT}); \`mneme config --check ${file}${storeFile ? ' --store-file' : ''}\` checks a file`,
      details: { file, problems },
    });
  return layer;
}

/**
 * `.state/config.checked.json` beside the store's config.toml: the values of the file's last
 * validated content, keyed by a hash of that content and of the schema. Any edit (or a new
 * mneme with other settings) misses and validates again; only the store's owner can write it.
 */
function checkedCopy(file: string, text: string) {
  const at = path.join(path.dirname(file), '.state', 'config.checked.json');
  const schema = JSON.stringify(SETTING_LIST.map((d) => [d.key, d.kind.spec, d.where]));
  const hash = createHash('sha256').update(schema).update('\u0000').update(text).digest('hex');
  return {
    read(): Layer | null {
      try {
        const c = JSON.parse(
          readInputFile(at, { cap: CONFIG_FILE_CAP, what: 'the checked config' }).toString('utf8'),
        ) as {
          hash?: string;
          values?: Record<string, unknown>;
        };
        if (c.hash !== hash || !c.values) return null;
        const layer: Layer = new Map();
        for (const [key, value] of Object.entries(c.values)) {
          const d = settingByKey.get(key);
          if (!d || d.where !== 'any' || !isValid(d.kind.spec, value)) return null;
          layer.set(key, { value, source: { kind: 'file', path: file } });
        }
        return layer;
      } catch {
        return null; // none yet, or unreadable: validate
      }
    },
    write(layer: Layer): void {
      const values = Object.fromEntries([...layer].map(([k, v]) => [k, v.value]));
      const tmp = `${at}.${process.pid}.tmp`;
      try {
        fs.mkdirSync(path.dirname(at), { recursive: true });
        fs.writeFileSync(tmp, `${JSON.stringify({ hash, values })}\n`);
        fs.renameSync(tmp, at);
      } catch {
        fs.rmSync(tmp, { force: true }); // a read-only store validates every time
      }
    },
  };
}

function resolveHome(p: string, base: string): string {
  if (p === '~' || p.startsWith('~/')) return path.join(os.homedir(), p.slice(1));
  return path.resolve(base, p);
}

/** The config file named by --config or $MNEME_CONFIG, if any. */
function namedFile(
  flags: SettingFlags,
  env: NodeJS.ProcessEnv,
): { path: string; source: Source } | null {
  if (flags.config !== undefined && flags.config !== '')
    return {
      path: path.resolve(flags.config),
      source: { kind: 'flag', name: CONFIG_FILE_SETTING.flag },
    };
  const v = env[CONFIG_FILE_SETTING.env];
  if (v) return { path: path.resolve(v), source: { kind: 'env', name: CONFIG_FILE_SETTING.env } };
  return null;
}

// ---- the store --------------------------------------------------------------------------------

const isStoreKey = (d: SettingDef) => d.where === 'no-store-file';

type Selected =
  { kind: 'files'; root: string } | { kind: 'postgres'; url: string; tenant?: string };

/**
 * Which store: the highest layer that names one decides (flags, then the environment, then a
 * --config file; --db and $MNEME_DATABASE_URL win over a directory of the same layer), else
 * ~/.mneme. The tenant is its own setting (checked when a store is opened: serve --db has none).
 */
function selectStore(layers: Layer[]): Selected {
  const flags = layers[0]!;
  if (flags.has('store.home') && flags.has('store.database_url'))
    throw new MnemeError('invalid', 'pass --store or --db, not both');
  for (const layer of layers) {
    const url = layer.get('store.database_url');
    if (url) {
      const tenant = layers.map((l) => l.get('store.tenant')).find((t) => t !== undefined);
      return { kind: 'postgres', url: url.value as string, tenant: tenant?.value as string };
    }
    const home = layer.get('store.home');
    if (home) return { kind: 'files', root: path.resolve(home.value as string) };
  }
  return { kind: 'files', root: path.join(os.homedir(), '.mneme') };
}

function targetOf(s: Selected): StoreTarget {
  if (s.kind === 'files' || s.tenant) return s as StoreTarget;
  throw new MnemeError('invalid', 'a Postgres store needs a tenant', {
    hint: 'pass --tenant NAME or set MNEME_TENANT (create one with `mneme tenant create NAME`)',
  });
}

/** Only which store the flags name (reads a --config file if one is named; no store file). */
export function resolveStore(flags: SettingFlags, env: NodeJS.ProcessEnv): StoreTarget {
  const named = namedFile(flags, env);
  const layers = [
    flagLayer(flags),
    envLayer(env, isStoreKey),
    ...(named ? [fileLayer(named.path, false, named.source)] : []),
  ];
  return targetOf(selectStore(layers));
}

// ---- everything -------------------------------------------------------------------------------

/**
 * The effective settings for one command or process, with where each came from. `storeFile`
 * false skips the store's own config.toml (for a caller that must not read the default store).
 */
export function loadSettings(
  flags: SettingFlags,
  env: NodeJS.ProcessEnv,
  opts: { storeFile?: boolean } = {},
): LoadedSettings {
  const named = namedFile(flags, env);
  const fl = flagLayer(flags);
  const el = envLayer(env);
  let file = named ? { ...named, layer: fileLayer(named.path, false, named.source) } : null;
  const selected = selectStore([fl, el, ...(file ? [file.layer] : [])]);
  if (!file && selected.kind === 'files' && opts.storeFile !== false) {
    const own = path.join(selected.root, 'config.toml');
    if (fs.existsSync(own)) {
      const source: Source = { kind: 'file', path: own };
      file = { path: own, source, layer: fileLayer(own, true, source) };
    }
  }
  const layers = [fl, el, ...(file ? [file.layer] : [])];
  const settings: Record<string, Record<string, unknown>> = {};
  const sources: Record<string, Source> = {};
  for (const d of SETTING_LIST) {
    const hit = layers.map((l) => l.get(d.key)).find((x) => x !== undefined);
    const [section, name] = d.key.split('.') as [string, string];
    (settings[section] ??= {})[name] = hit ? hit.value : d.default;
    sources[d.key] = hit ? hit.source : { kind: 'default' };
  }
  // embed.key_env names the variable that holds the embedding key: read here, as every variable.
  const keyEnv = settings.embed!.key_env as string | undefined;
  if (keyEnv) {
    settings.embed!.api_key = env[keyEnv] || undefined;
    sources['embed.api_key'] = { kind: 'env', name: keyEnv };
  }
  // The store as selected (a default home is a value too, so `mneme config` can show it).
  if (selected.kind === 'files') settings.store!.home = selected.root;
  return {
    settings: settings as Settings,
    sources,
    file: file ? { path: file.path, source: file.source } : null,
    storeKind: selected.kind,
    target: () => targetOf(selected),
  };
}

/** `mneme config --check FILE`: the file's settings, or the refusal loading would give. */
export function checkConfigFile(file: string, opts: { storeFile?: boolean } = {}) {
  const abs = path.resolve(file);
  const layer = validateFile(
    abs,
    readConfig(abs, { kind: 'file', path: abs }),
    opts.storeFile === true,
  );
  return [...layer.keys()];
}

/** One setting's value by its key (`inject.max_bytes`). */
export function settingValue(s: Settings, key: string): unknown {
  const [section, name] = key.split('.') as [string, string];
  return (s as unknown as Record<string, Record<string, unknown>>)[section]?.[name];
}

/** A setting's value as `mneme config` shows it (secrets hidden). */
export function shownValue(d: SettingDef, v: unknown): unknown {
  if (v === undefined) return null;
  // Any URL (the database, an endpoint) may carry a password or key: masked, secret or not.
  if (typeof v === 'string' && looksLikeUrl(v)) return redactUrl(v);
  return d.secret ? '(hidden)' : v;
}

export const sourceText = (s: Source): string =>
  s.kind === 'default'
    ? 'default'
    : s.kind === 'file'
      ? s.path
      : s.kind === 'env'
        ? `env ${s.name}`
        : `flag ${s.name}`;
