// Builds the /ui page into src/enfold/server/static/ (committed, so installing needs no build).
// Usage: cd web && npm ci && npm run build
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, '..', 'src', 'enfold', 'server', 'static');
mkdirSync(out, { recursive: true });

const version = (name) => JSON.parse(readFileSync(join(here, 'node_modules', name, 'package.json'), 'utf8')).version;
// The bundled libraries, each MIT-licensed; their licence texts ship beside the bundle.
const BUNDLED = ['cytoscape', 'cytoscape-fcose', 'cose-base', 'layout-base'];

await build({
  entryPoints: [join(here, 'src', 'app.js')],
  bundle: true,
  minify: true,
  format: 'iife',
  target: ['es2020'],
  outfile: join(out, 'app.js'),
  legalComments: 'none',
  banner: { js: `/* enfold graph explorer; bundles ${BUNDLED.map((n) => `${n} ${version(n)}`).join(', ')} (MIT, see THIRD_PARTY_LICENSES.txt) */` },
  logLevel: 'info',
});
await build({
  entryPoints: [join(here, 'src', 'style.css')],
  bundle: true,
  minify: true,
  outfile: join(out, 'app.css'),
  logLevel: 'info',
});
copyFileSync(join(here, 'src', 'index.html'), join(out, 'index.html'));
writeFileSync(join(out, 'THIRD_PARTY_LICENSES.txt'), BUNDLED.map((n) => {
  const dir = join(here, 'node_modules', n);
  const file = readdirSync(dir).find((f) => /^licen[cs]e/i.test(f));
  return `${n} ${version(n)}\n\n${file ? readFileSync(join(dir, file), 'utf8').trim() : 'MIT'}\n`;
}).join('\n' + '-'.repeat(72) + '\n\n'));
