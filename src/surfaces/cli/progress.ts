// A progress bar for long CLI commands (an import): one self-overwriting line on stderr, only
// when stderr is a terminal and the output is not --json, so pipes, logs and JSON stay clean.
import type { Io } from './shared.js';

export interface Progress {
  update(done: number, total: number): void;
  /** Clears the line (the command's own output follows). */
  end(): void;
}

const NONE: Progress = { update: () => {}, end: () => {} };

export function progressBar(io: Io, label: string, json: boolean | undefined): Progress {
  if (json || io.tty?.stderr !== true) return NONE;
  let drawn = false;
  let last = 0;
  return {
    update(done, total) {
      const now = Date.now();
      if (done < total && now - last < 100) return;
      last = now;
      const width = 30;
      const filled = total > 0 ? Math.round((done / total) * width) : width;
      io.stderr(`\r${label} [${'#'.repeat(filled).padEnd(width, '.')}] ${done}/${total}`);
      drawn = true;
    },
    end() {
      if (drawn) io.stderr('\r\x1b[K');
      drawn = false;
    },
  };
}
