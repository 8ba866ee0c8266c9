/* global require, __filename */
// Injected into the CommonJS bundle by scripts/bundle.mjs: what import.meta.url means there, the
// bundle's own file URL (the package root and node_modules are found from it).
// eslint-disable-next-line @typescript-eslint/no-require-imports -- CommonJS is what the bundle is
export const import_meta_url = require('node:url').pathToFileURL(__filename).href;
