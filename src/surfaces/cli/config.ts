// `mneme config`: the effective settings and where each came from (default, a config file, an
// environment variable, a flag); `--check FILE` validates a config file without using it.
import path from 'node:path';
import { CONFIG_FILE_SETTING, SETTING_LIST } from '../config/schema.js';
import {
  checkConfigFile,
  settingValue,
  shownValue,
  sourceText,
  type Source,
} from '../config/settings.js';
import { storeTarget } from '../open.js';
import { table } from './format.js';
import type { CliContext } from './run.js';

const fileSource = (s: Source) =>
  s.kind === 'flag' ? `from ${s.name}` : s.kind === 'env' ? `from ${s.name}` : "the store's own";

export function registerConfig(c: CliContext): void {
  c.program
    .command('config')
    .description('show the effective settings and where each came from (docs/configuration.md)')
    .option('--check <file>', 'validate a config file (unknown keys, values) and use nothing')
    .option('--store-file', "with --check: check it as a store's own config.toml")
    .action((o: { check?: string; storeFile?: boolean }) => {
      if (o.check !== undefined) {
        const file = path.resolve(o.check);
        // The store's own config.toml is checked as what it is (it may not choose the store),
        // so the check agrees with loading it.
        const target = storeTarget(c.globals(), c.io.env);
        const own = target.kind === 'files' && file === path.join(target.root, 'config.toml');
        const keys = checkConfigFile(file, { storeFile: o.storeFile === true || own });
        c.out(
          { file, ok: true, keys },
          () => `${file}: ok (${keys.length} settings: ${keys.join(', ') || 'none'})`,
        );
        return;
      }
      const l = c.settings();
      const rows = SETTING_LIST.map((d) => ({
        def: d,
        key: d.key,
        env: d.env,
        value: shownValue(d, settingValue(l.settings, d.key)),
        source: l.sources[d.key]!,
      }));
      const json = {
        file: l.file ? { path: l.file.path, source: l.file.source } : null,
        settings: Object.fromEntries(
          rows.map((r) => [r.key, { value: r.value, source: r.source, env: r.env }]),
        ),
      };
      c.out(json, () => {
        const head = l.file
          ? `config file: ${l.file.path} (${fileSource(l.file.source)})`
          : l.storeKind === 'files'
            ? `config file: none (${path.join(l.settings.store.home!, 'config.toml')} does not exist; or pass ${CONFIG_FILE_SETTING.flag} FILE)`
            : `config file: none (pass ${CONFIG_FILE_SETTING.flag} FILE or set ${CONFIG_FILE_SETTING.env})`;
        return [
          head,
          '',
          table([
            ['SETTING', 'VALUE', 'FROM'],
            ...rows.map((r) => [
              r.key,
              r.value === null
                ? `(unset${r.def.defaultText ? `: ${r.def.defaultText}` : ''})`
                : typeof r.value === 'string'
                  ? r.value
                  : JSON.stringify(r.value),
              sourceText(r.source),
            ]),
          ]),
        ].join('\n');
      });
    });
}
