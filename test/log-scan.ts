import { closeSync, openSync, readdirSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { KEY_PREFIX } from '../src/auth/key-secret.ts';
import { ADMIN_KEY } from './helpers/admin-key.ts';
import { PROMPT_MARKER } from './helpers/test-logs.ts';

/*
 * What no log line may carry (docs/operations.md, Logs): an API key's secret (the `lagoon_` prefix and 43 base64url
 * characters, src/auth/key-secret.ts), the tests' bootstrap ADMIN key, and the marker the tests put in prompts.
 */
const KEY_SECRET = new RegExp(`${KEY_PREFIX}[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])`, 'g');

export interface LogFinding {
  readonly file: string;
  readonly line: number;
  readonly what: string;
}

/** A run's logs are a few megabytes: one this large is a runaway (a retry loop logging without end). */
const RUNAWAY_BYTES = 200 * 1024 * 1024;

/** Every line of every file in `dir` that carries a secret or a prompt, with its file and line number. */
export function scanLogs(dir: string): LogFinding[] {
  const findings: LogFinding[] = [];
  for (const name of readdirSync(dir)) {
    const file = join(dir, name);
    const size = statSync(file).size;
    if (size > RUNAWAY_BYTES)
      findings.push({ file, line: 0, what: `${Math.round(size / 2 ** 20)} MB of logs: something logs without end` });
    let lineNumber = 0;
    const recent: string[] = [];
    for (const text of linesOf(file)) {
      lineNumber += 1;
      recent.push(text);
      if (recent.length > 3) recent.shift();
      if (isBootstrapSecretLine(recent, recent.length - 1)) continue;
      const what = offence(text);
      if (what) findings.push({ file, line: lineNumber, what });
    }
  }
  return findings;
}

/** The file's lines, read a few megabytes at a time (a whole log in one string can be over V8's limit). */
function* linesOf(file: string): Generator<string> {
  const fd = openSync(file, 'r');
  try {
    const chunk = Buffer.alloc(4 * 1024 * 1024);
    const decoder = new StringDecoder('utf8'); // a character cut at a chunk's end is completed by the next
    let rest = '';
    for (;;) {
      const read = readSync(fd, chunk, 0, chunk.length, null);
      if (read === 0) break;
      const lines = (rest + decoder.write(chunk.subarray(0, read))).split('\n');
      rest = lines.pop() ?? '';
      yield* lines;
    }
    yield rest;
  } finally {
    closeSync(fd);
  }
}

/**
 * The first start prints its new ADMIN key once, on its own line after "It is shown only now" (src/main.ts): that
 * is the one place a secret is meant to be seen, by the operator at the terminal, not a log line.
 */
function isBootstrapSecretLine(lines: readonly string[], index: number): boolean {
  const text = lines[index]?.trim() ?? '';
  if (!new RegExp(`^${KEY_PREFIX}[A-Za-z0-9_-]{43}$`).test(text)) return false;
  const before = lines.slice(Math.max(0, index - 2), index);
  return before.some((line) => line.includes('It is shown only now'));
}

function offence(text: string): string | undefined {
  if (text.includes(PROMPT_MARKER)) return 'a prompt (the tests’ prompt marker)';
  if (text.includes(ADMIN_KEY)) return 'the bootstrap ADMIN key';
  // A metric or setting name can look like a key; a secret has upper case letters, digits or dashes.
  for (const match of text.matchAll(KEY_SECRET))
    if (/[A-Z0-9-]/.test(match[0].slice(KEY_PREFIX.length))) return `an API key secret (…${match[0].slice(-6)})`;
  return undefined;
}

/** The teardown's verdict: an error naming each file and line (the first 20), or nothing. */
export function logScanError(dir: string): Error | undefined {
  const findings = scanLogs(dir);
  if (findings.length === 0) return undefined;
  const lines = findings.slice(0, 20).map((f) => `  ${f.file}:${f.line}: ${f.what}`);
  return new Error(
    `The logs of this run carry secrets or prompts (${findings.length} lines; the logs are kept in ${dir}):\n${lines.join('\n')}`,
  );
}
