import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { build, type Plugin } from 'esbuild';

/** Where the console is served (rest/routes/dashboard.ts) and its hashed assets below it. */
export const DASHBOARD_PATH = '/dashboard';
const ASSETS = 'assets';

/** What may not reach the browser bundle: urql parses documents itself, the graphql package is 40 KB more. */
const FORBIDDEN_INPUTS = [/node_modules\/graphql\//];

/** graphql-sse's index also exports its server handler, which imports graphql: the browser takes the client only. */
const sseClientOnly: Plugin = {
  name: 'graphql-sse-client',
  setup(build) {
    const client = createRequire(import.meta.url)
      .resolve('graphql-sse/package.json')
      .replace(/package\.json$/, 'lib/client.mjs');
    build.onResolve({ filter: /^graphql-sse$/ }, () => ({ path: client }));
  },
};

/**
 * Builds the console (web/src/main.tsx) into `outDir` (dist/web): minified, content-hashed JS and CSS under
 * assets/, the index.html that loads them, and a .br and .gz beside each file for the server to send as they
 * are. Same rules as the server build (build.ts): unchanged files are left alone, changed ones replaced whole,
 * and files of an older build removed.
 */
export async function buildConsole(outDir: string): Promise<{ files: string[] }> {
  const root = fileURLToPath(new URL('./', import.meta.url));
  const result = await build({
    entryPoints: [join(root, 'src/main.tsx')],
    outdir: join(outDir, ASSETS),
    entryNames: '[name]-[hash]',
    assetNames: '[name]-[hash]',
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    target: ['chrome111', 'firefox111', 'safari16.4'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    tsconfig: join(root, 'tsconfig.json'),
    define: { 'process.env.NODE_ENV': '"production"' },
    legalComments: 'none',
    plugins: [sseClientOnly],
    metafile: true,
    logLevel: 'warning',
    write: false,
  });
  const bundled = Object.keys(result.metafile.inputs).filter((input) => FORBIDDEN_INPUTS.some((re) => re.test(input)));
  if (bundled.length > 0) throw new Error(`the console bundle must not include: ${bundled.join(', ')}`);
  const outputs = result.outputFiles.map((file) => ({ path: file.path, contents: file.contents }));
  const url = (path: string) => `${DASHBOARD_PATH}/${relative(outDir, path).split('\\').join('/')}`;
  const scripts = outputs.filter((file) => file.path.endsWith('.js')).map((file) => url(file.path));
  const styles = outputs.filter((file) => file.path.endsWith('.css')).map((file) => url(file.path));
  outputs.push({ path: join(outDir, 'index.html'), contents: Buffer.from(indexHtml(scripts, styles)) });
  const files = outputs.flatMap((file) => [file, ...compressed(file)]);
  for (const file of files) writeIfChanged(file.path, file.contents);
  removeOthers(outDir, new Set(files.map((file) => file.path)));
  return { files: files.map((file) => relative(outDir, file.path)) };
}

function indexHtml(scripts: readonly string[], styles: readonly string[]): string {
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<title>Lagoon console</title>',
    '<link rel="icon" href="data:,">',
    ...styles.map((href) => `<link rel="stylesheet" href="${href}">`),
    ...scripts.map((src) => `<script type="module" src="${src}"></script>`),
    '</head>',
    '<body>',
    '<noscript>The Lagoon console needs JavaScript.</noscript>',
    '<div id="app"></div>',
    '</body>',
    '</html>',
    '',
  ].join('\n');
}

function compressed(file: { path: string; contents: Uint8Array }) {
  const br = brotliCompressSync(file.contents, {
    params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: file.contents.length },
  });
  return [
    { path: `${file.path}.br`, contents: new Uint8Array(br) },
    { path: `${file.path}.gz`, contents: new Uint8Array(gzipSync(file.contents, { level: 9 })) },
  ];
}

function writeIfChanged(path: string, contents: Uint8Array): void {
  if (existsSync(path) && readFileSync(path).equals(contents)) return;
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(`${path}.${process.pid}.tmp`, contents);
  renameSync(`${path}.${process.pid}.tmp`, path);
}

function removeOthers(dir: string, keep: ReadonlySet<string>): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) removeOthers(path, keep);
    else if (!keep.has(path) && !entry.name.endsWith('.tmp')) rmSync(path, { force: true });
  }
}
