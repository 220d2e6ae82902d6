/*
 * The production install, as an operator does it: the repository's files copied to a scratch directory,
 * `npm ci --omit=dev`, `npm run build`, `node dist/main.js` on its embedded database. Then, over HTTP, the calls that
 * load the packages a dev install could hide: a chat completion, the text parser with a .docx (worker thread,
 * mammoth, fflate), the wallet routes (viem: a signed sign-in verified by the server), and a credit through the
 * operator CLI (tsx), GraphiQL's files. Fails on any undeclared or dev-only runtime package. Run by .ci/run; alone:
 * `node --import tsx .ci/production-smoke.ts`. The clients (openai, docx, viem) come from this dev install.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { createSiweMessage } from 'viem/siwe';
import { firstOutOfOrder, makeDocx, words } from '../test/helpers/documents.ts';
import { freePort } from '../test/helpers/free-port.ts';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const started = Date.now();

function log(message: string): void {
  console.log(`[production smoke ${((Date.now() - started) / 1000).toFixed(1)} s] ${message}`);
}

function check(condition: boolean, message: string, detail?: unknown): asserts condition {
  if (!condition) throw new Error(`${message}${detail === undefined ? '' : `: ${JSON.stringify(detail)}`}`);
}

/** Runs a command to its end with its output shown; throws on a non-zero exit. */
function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): void {
  const result = spawnSync(command, args, { cwd, env, stdio: 'inherit' });
  check(result.status === 0, `${command} ${args.join(' ')} failed (exit ${result.status})`);
}

/** The files of the tree as git knows it (tracked and new, not ignored): what a clone of the commit holds. */
function copyTree(to: string): void {
  const listed = spawnSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  check(listed.status === 0, 'git ls-files failed', listed.stderr);
  for (const file of listed.stdout.split('\0').filter(Boolean)) {
    if (!existsSync(join(ROOT, file))) continue; // deleted in the working tree, not yet committed
    mkdirSync(dirname(join(to, file)), { recursive: true });
    copyFileSync(join(ROOT, file), join(to, file));
  }
}

/** The scratch processes' environment: this one's without any database, Redis or Lagoon setting, plus `env`. */
function cleanEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const kept = Object.entries(process.env).filter(
    ([name]) => !/^(LAGOON_|DATABASE_URL|TEST_DATABASE_URL|REDIS_URL|NODE_ENV|NODE_OPTIONS|npm_)/.test(name),
  );
  return { ...Object.fromEntries(kept), ...env };
}

async function waitHealthy(url: string, server: ChildProcess, output: () => string): Promise<void> {
  // Generous: the first start creates the embedded database, slow on a busy machine; a healthy one needs seconds.
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (server.exitCode !== null) throw new Error(`the server exited (${server.exitCode}):\n${output()}`);
    try {
      if ((await fetch(`${url}/healthz`)).ok) return;
    } catch {
      // not listening yet
    }
    check(Date.now() < deadline, `the server did not answer /healthz in 90 s:\n${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function callEverything(url: string, key: string, scratch: string, env: NodeJS.ProcessEnv): Promise<void> {
  const api = `${url}/api/v1`;

  log('operator CLI: accounts credit');
  run(
    'npm',
    ['run', '-s', 'lagoon', '--', 'accounts', 'credit', '--key', key, '--currency', 'USD', '--amount', '5'],
    scratch,
    env,
  );
  const balance = (await (
    await fetch(`${api}/billing/balance`, { headers: { authorization: `Bearer ${key}` } })
  ).json()) as {
    balances?: { usd?: number };
  };
  check(balance.balances?.usd === 5, 'the credit did not reach the balance', balance);

  log('chat completion (simulator model, openai client)');
  const openai = new OpenAI({ apiKey: key, baseURL: api, maxRetries: 0 });
  const completion = await openai.chat.completions.create({
    model: 'default',
    messages: [{ role: 'user', content: 'Hello' }],
  });
  const reply = completion.choices[0]?.message.content ?? '';
  check(reply.length > 0 && (completion.usage?.total_tokens ?? 0) > 0, 'an empty chat completion', completion);

  log('text parser with a .docx');
  const expected = words('smoke', 6);
  const docx = await makeDocx({
    heading: expected[0]!,
    paragraphs: [`${expected[1]} ${expected[2]}`],
    table: [[expected[3]!, expected[4]!]],
    after: expected[5]!,
  });
  const form = new FormData();
  form.append('file', new Blob([docx]), 'smoke.docx');
  const parsed = await fetch(`${api}/augment/text-parser`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}` },
    body: form,
  });
  const parsedBody = (await parsed.json()) as { text?: string };
  check(parsed.status === 200, `text parser answered ${parsed.status}`, parsedBody);
  check(firstOutOfOrder(parsedBody.text ?? '', expected) === undefined, 'the .docx text is incomplete', parsedBody);

  log('wallet: x402 discovery answer, then a signed-in wallet reads its credit');
  const anonymous = await fetch(`${api}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'default', messages: [{ role: 'user', content: 'Hi' }] }),
  });
  const discovery = (await anonymous.json()) as { x402Version?: number; extensions?: Record<string, unknown> };
  check(anonymous.status === 402 && discovery.x402Version !== undefined, 'no x402 discovery answer', discovery);
  check(discovery.extensions?.['sign-in-with-x'] !== undefined, 'the 402 has no sign-in challenge', discovery);

  const { nonce } = (await (await fetch(`${api}/x402/nonce`)).json()) as { nonce: string };
  const wallet = privateKeyToAccount(generatePrivateKey());
  const domain = new URL(url).host;
  const issuedAt = new Date();
  const message = createSiweMessage({
    address: wallet.address,
    chainId: 8453,
    domain,
    uri: url,
    version: '1',
    nonce,
    issuedAt,
    expirationTime: new Date(issuedAt.getTime() + 5 * 60_000),
    statement: 'Sign in to the Lagoon API with your wallet.',
  });
  const signature = await wallet.signMessage({ message });
  const signIn = Buffer.from(
    JSON.stringify({ address: wallet.address, message, signature, timestamp: issuedAt.getTime(), chainId: 8453 }),
  ).toString('base64');
  const credit = await fetch(`${api}/x402/balance/${wallet.address}`, { headers: { 'sign-in-with-x': signIn } });
  const creditBody = (await credit.json()) as { success?: boolean };
  check(credit.status === 200 && creditBody.success === true, `wallet balance answered ${credit.status}`, creditBody);

  log('GraphiQL script (loaded on first request)');
  const graphiql = await fetch(`${url}/graphql/graphiql/graphiql.js`);
  await graphiql.arrayBuffer();
  check(graphiql.status === 200, `GraphiQL's script answered ${graphiql.status}`);
}

async function main(): Promise<void> {
  const scratch = mkdtempSync(join(tmpdir(), 'lagoon-production-'));
  let server: ChildProcess | undefined;
  let output = '';
  try {
    log(`copying the tree to ${scratch}`);
    copyTree(scratch);
    const env = cleanEnv({ LAGOON_DATA_DIR: join(scratch, '.lagoon'), LOG_LEVEL: 'warn', CI: 'true' });
    log('npm ci --omit=dev');
    run('npm', ['ci', '--omit=dev', '--no-audit', '--no-fund', '--prefer-offline'], scratch, env);
    log('npm run build');
    run('npm', ['run', 'build'], scratch, env);

    const port = await freePort();
    const key = `lagoon_smoke${generatePrivateKey().slice(2, 34)}`;
    const url = `http://127.0.0.1:${port}`;
    log(`node dist/main.js on ${url}`);
    const serverEnv = { ...env, HOST: '127.0.0.1', PORT: String(port), LAGOON_BOOTSTRAP_ADMIN_KEY: key };
    server = spawn(process.execPath, ['dist/main.js'], {
      cwd: scratch,
      env: serverEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    server.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    server.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => server?.once('exit', (code) => resolve(code)));
    await waitHealthy(url, server, () => output);

    await callEverything(url, key, scratch, serverEnv);

    log('stopping the server (SIGTERM)');
    server.kill('SIGTERM');
    const code = await exited;
    check(code === 0, `the server exited with ${code}:\n${output}`);
    log('passed');
  } catch (error) {
    if (server && server.exitCode === null) server.kill('SIGKILL');
    if (output) console.error(`--- server output ---\n${output}`);
    throw error;
  } finally {
    // Deleting a few hundred packages takes a minute on a busy disk: nothing waits for it.
    spawn('rm', ['-rf', scratch], { detached: true, stdio: 'ignore' }).unref();
  }
}

await main();
