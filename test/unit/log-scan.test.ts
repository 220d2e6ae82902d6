import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { scanLogs } from '../log-scan.ts';
import { PROMPT_MARKER } from '../helpers/test-logs.ts';

/** The suite's log scan (test/log-scan.ts), which fails a run whose logs carry a secret or a prompt. */
describe('the log scan', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lagoon-log-scan-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const secret = `lagoon_${'Ab3-'.repeat(10)}xyz`;

  it('names the file and line of a secret or a prompt, and lets the first start print its ADMIN key once', () => {
    writeFileSync(
      join(dir, 'server-1.log'),
      [
        '  First start: created the bootstrap account and its ADMIN key. It is shown only now:',
        '',
        `    ${secret}`,
        '{"msg":"request","status":200}',
        `{"msg":"request","authorization":"Bearer ${secret}"}`,
        `{"msg":"chat","prompt":"${PROMPT_MARKER}"}`,
        // a metric name is no secret
        `lagoon_${'a'.repeat(43)}`,
      ].join('\n'),
    );
    expect(scanLogs(dir).map((finding) => [finding.line, finding.what.split(' (')[0]])).toEqual([
      [5, 'an API key secret'],
      [6, 'a prompt'],
    ]);
  });

  it('reads a log line by line across its chunks, to the last line', () => {
    const filler = '{"msg":"request","status":200}\n'.repeat(200_000); // ~6 MB: more than one chunk
    writeFileSync(join(dir, 'server-1.log'), `${filler}{"prompt":"${PROMPT_MARKER}"}`);
    expect(scanLogs(dir)).toEqual([{ file: join(dir, 'server-1.log'), line: 200_001, what: expect.any(String) }]);
  });
});
