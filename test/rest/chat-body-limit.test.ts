import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chatAccount, startChatServer, type ChatServer } from '../helpers/chat.ts';
import { testDatabaseKind } from '../helpers/db.ts';

/*
 * Chat bodies have their own limit (LAGOON_MAX_CHAT_BODY_BYTES, 20 MiB by default), separate from the 1 MiB JSON
 * limit of the other routes: an image sent inline as a base64 data URL to a vision model is larger than 1 MiB on
 * its own. The limit still holds, counted as the body arrives: past it, 413 PAYLOAD_TOO_LARGE.
 */

const MiB = 1_048_576;
/** A data URL of about `bytes` (a PNG header and filler: the simulator reads the URL, not the picture). */
const imageDataUrl = (bytes: number) => `data:image/png;base64,iVBORw0KGgo${'A'.repeat(bytes)}`;

describe(`Chat body limit (${testDatabaseKind})`, () => {
  let server: ChatServer;
  let account: Awaited<ReturnType<typeof chatAccount>>;

  beforeAll(async () => {
    server = await startChatServer();
    account = await chatAccount(server, '5');
  });
  afterAll(async () => server?.close());

  it('should answer and charge a ~1.5 MB inline image sent to a vision model with the openai client', async () => {
    const before = await account.balance();
    const completion = await account.client.chat.completions.create({
      model: 'lagoon-sim-chat',
      max_tokens: 16,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is in this picture?' },
            { type: 'image_url', image_url: { url: imageDataUrl(1.5 * MiB) } },
          ],
        },
      ],
    });
    expect(completion.choices[0]?.message.content).toEqual(expect.any(String));
    expect(completion.usage?.prompt_tokens).toBeGreaterThan(0);
    expect((await account.balance()).amount).toBeLessThan(before.amount);
  });

  it('should keep the 1 MiB JSON limit on the other JSON routes', async () => {
    const response = await fetch(`${server.url}/api/v1/api_keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.adminSecret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ apiKeyType: 'INFERENCE', description: 'big', padding: 'x'.repeat(1.5 * MiB) }),
    });
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
  });

  const chatBody = (bytes: number) =>
    JSON.stringify({
      model: 'lagoon-sim-chat',
      max_tokens: 8,
      messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: imageDataUrl(bytes) } }] }],
    });

  it('should answer 413 for a 21 MB body, declared or streamed, and charge nothing', async () => {
    const before = await account.balance();
    const body = Buffer.from(chatBody(21 * 1_000_000));
    const declared = await fetch(`${server.url}/api/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.secret}`, 'content-type': 'application/json' },
      body,
    });
    expect(declared.status).toBe(413);
    expect(await declared.json()).toMatchObject({
      code: 'PAYLOAD_TOO_LARGE',
      error: expect.stringContaining('20971520'),
    });

    // Chunked, without Content-Length: refused once the count passes the limit.
    const streamed = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const request = httpRequest(
        `${server.url}/api/v1/chat/completions`,
        { method: 'POST', headers: { authorization: `Bearer ${account.secret}`, 'content-type': 'application/json' } },
        (response) => {
          let text = '';
          response.on('data', (chunk: Buffer) => (text += chunk.toString()));
          response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
        },
      );
      request.on('error', reject);
      let offset = 0;
      const writeMore = () => {
        while (offset < body.length) {
          const chunk = body.subarray(offset, offset + 256 * 1024);
          offset += chunk.length;
          if (!request.write(chunk)) {
            request.once('drain', writeMore);
            return;
          }
        }
        request.end();
      };
      writeMore();
    });
    expect(streamed.status).toBe(413);
    expect(JSON.parse(streamed.text)).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
    expect(await account.balance()).toEqual(before);
  });

  it('should follow LAGOON_MAX_CHAT_BODY_BYTES, in the in-process fetch handler too', async () => {
    const small = await startChatServer({ LAGOON_MAX_CHAT_BODY_BYTES: String(2 * MiB) });
    try {
      const smallAccount = await chatAccount(small, '1');
      const call = (bytes: number) =>
        small.t.app.fetch(
          new Request('http://lagoon.test/api/v1/chat/completions', {
            method: 'POST',
            headers: { authorization: `Bearer ${smallAccount.secret}`, 'content-type': 'application/json' },
            body: chatBody(bytes),
          }),
        );
      expect((await call(1.5 * MiB)).status).toBe(200);
      expect((await call(2.5 * MiB)).status).toBe(413);
    } finally {
      await small.close();
    }
  });
});
