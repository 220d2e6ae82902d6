import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
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

/** Every line of every file in `dir` that carries a secret or a prompt, with its file and line number. */
export function scanLogs(dir: string): LogFinding[] {
  const findings: LogFinding[] = [];
  for (const name of readdirSync(dir)) {
    const file = join(dir, name);
    const lines = readFileSync(file, 'utf8').split('\n');
    lines.forEach((text, index) => {
      if (isBootstrapSecretLine(lines, index)) return;
      const what = offence(text);
      if (what) findings.push({ file, line: index + 1, what });
    });
  }
  return findings;
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
