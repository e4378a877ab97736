// Builds the /ui page into src/enfold/server/static/ (committed, so installing needs no build).
// Usage: cd web && npm ci && npm run build
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, '..', 'src', 'enfold', 'server', 'static');
mkdirSync(out, { recursive: true });

const cytoscape = JSON.parse(readFileSync(join(here, 'node_modules', 'cytoscape', 'package.json'), 'utf8'));

await build({
  entryPoints: [join(here, 'src', 'app.js')],
  bundle: true,
  minify: true,
  format: 'iife',
  target: ['es2020'],
  outfile: join(out, 'app.js'),
  legalComments: 'none',
  banner: { js: `/* enfold graph explorer; bundles cytoscape ${cytoscape.version} (MIT, see cytoscape.LICENSE.txt) */` },
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
copyFileSync(join(here, 'node_modules', 'cytoscape', 'LICENSE'), join(out, 'cytoscape.LICENSE.txt'));
