import { readFileSync } from 'node:fs';
import type OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chatAccount, requestIdOf, startChatServer, tokenCostNano, type ChatServer } from '../helpers/chat.ts';
import { testDatabaseKind } from '../helpers/db.ts';

/*
 * File parts in chat (`{"type": "file", "file": {"filename", "file_data"}}`) through the official `openai` client:
 * the text parser reads the file and the model gets its text; the text counts as prompt tokens and each file is one
 * text parser request (0.01 USD). Bad base64, an unsupported type, file_id, too many files and an oversized file are
 * refused before anything is charged.
 */

const SIM_CHAT = { input: '0.5', output: '2' };
const TEXT_PARSER_NANO = 10_000_000n; // 0.01 USD
const fixture = (name: string) => readFileSync(new URL(`../fixtures/libreoffice/${name}`, import.meta.url));
const dataUrl = (mime: string, bytes: Uint8Array | string) =>
  `data:${mime};base64,${Buffer.from(bytes).toString('base64')}`;
const filePart = (filename: string, file_data: string) => ({ type: 'file', file: { filename, file_data } }) as const;

type Content = OpenAI.Chat.ChatCompletionContentPart[];
type ErrorBody = { code: string; error: string; issues?: { path: (string | number)[]; message: string }[] };

describe(`Chat file parts (${testDatabaseKind})`, () => {
  let server: ChatServer;
  let account: Awaited<ReturnType<typeof chatAccount>>;

  /** The same request as raw HTTP, for the refusals (status and body). */
  const post = (content: unknown[]) =>
    fetch(`${server.url}/api/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'lagoon-sim-chat', messages: [{ role: 'user', content }] }),
    });
  const refused = async (content: unknown[], status: number, path?: string) => {
    const before = await account.balance();
    const response = await post(content);
    expect(response.status).toBe(status);
    const body = (await response.json()) as ErrorBody;
    if (path) expect(body.issues?.map((issue) => issue.path.join('.'))).toContain(path);
    expect(await account.balance()).toEqual(before);
    return body;
  };

  beforeAll(async () => {
    // Room for a body larger than the text parser's 25 MB file limit.
    server = await startChatServer({ LAGOON_MAX_CHAT_BODY_BYTES: '40000000' });
    account = await chatAccount(server, '5');
  }, 60_000);
  afterAll(async () => server?.close());

  it('should pass a markdown file on as text, priced as tokens plus one text parser request', async () => {
    const markdown = '# Quokkas\n\nQuokkas thrive on Rottnest island, grinning at visitors.';
    const before = await account.balance();
    const completion = await account.client.chat.completions.create({
      model: 'lagoon-sim-chat',
      messages: [{ role: 'user', content: [filePart('q.md', dataUrl('text/markdown', markdown))] as Content }],
    });
    // The simulator answers about the topic words of the last user message: they came from the file.
    expect(completion.choices[0]!.message.content!.toLowerCase()).toContain('quokkas');
    const usage = completion.usage!;
    expect(usage.prompt_tokens).toBeGreaterThan(15);
    const entries = await account.entries(requestIdOf(completion.id));
    expect(entries.map((entry) => [entry.sku, entry.units])).toEqual([
      ['augment-text-parser', 1],
      ['lagoon-sim-chat-llm-input-mtoken', usage.prompt_tokens],
      ['lagoon-sim-chat-llm-output-mtoken', usage.completion_tokens],
    ]);
    const expected =
      TEXT_PARSER_NANO +
      tokenCostNano(usage.prompt_tokens, SIM_CHAT.input) +
      tokenCostNano(usage.completion_tokens, SIM_CHAT.output);
    const after = await account.balance();
    expect(before.amount - after.amount).toBe(expected);
    expect(after.reserved).toBe(0n);
  });

  it('should read a PDF and a DOCX beside the question, streaming too', async () => {
    const content = [
      filePart('doc.pdf', dataUrl('application/pdf', fixture('doc.pdf'))),
      { type: 'text', text: 'Sum up?' },
    ] as Content;
    const plain = await account.client.chat.completions.create({
      model: 'lagoon-sim-chat',
      messages: [{ role: 'user', content }],
    });
    expect(plain.choices[0]!.message.content!.toLowerCase()).toContain('quarterly');

    const docx = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
    const stream = await account.client.chat.completions.create({
      model: 'lagoon-sim-chat',
      stream: true,
      messages: [{ role: 'user', content: [filePart('doc.docx', dataUrl(docx, fixture('doc.docx')))] as Content }],
    });
    let text = '';
    let id = '';
    for await (const chunk of stream) {
      id = chunk.id;
      text += chunk.choices[0]?.delta.content ?? '';
    }
    expect(text.toLowerCase()).toContain('quarterly');
    await expect
      .poll(async () => (await account.entries(requestIdOf(id))).map((entry) => entry.sku))
      .toContain('augment-text-parser');
  });

  it('should take files in the GraphQL chatCompletion parts and in /responses input_file parts', async () => {
    const markdown = dataUrl('text/markdown', '# Wombats\n\nWombats leave cubic droppings.');
    const mutation = `mutation($input: ChatCompletionInput!) { chatCompletion(input: $input) {
      ... on MutationChatCompletionSuccess { data { choices { message { content } } } } ... on Error { message } } }`;
    const graphql = await server.t.graphql<{
      chatCompletion: { data: { choices: { message: { content: string } }[] } };
    }>(
      mutation,
      {
        input: {
          model: 'lagoon-sim-chat',
          messages: [{ role: 'USER', parts: [{ file: { filename: 'w.md', fileData: markdown } }] }],
        },
      },
      account.secret,
    );
    expect(graphql.errors).toBeUndefined();
    expect(graphql.data!.chatCompletion.data.choices[0]!.message.content.toLowerCase()).toContain('wombats');

    const response = await account.client.responses.create({
      model: 'lagoon-sim-chat',
      input: [{ role: 'user', content: [{ type: 'input_file', filename: 'w.md', file_data: markdown }] }],
    });
    expect(response.output_text.toLowerCase()).toContain('wombats');
  });

  it('should refuse bad base64, a non-data URL, an unsupported type and file_id with 400, charging nothing', async () => {
    await refused(
      [filePart('a.md', 'data:text/markdown;base64,@@not base64@@')],
      400,
      'messages.0.content.0.file.file_data',
    );
    await refused([filePart('a.md', 'https://example.com/a.md')], 400, 'messages.0.content.0.file.file_data');
    const png = Buffer.from('89504e470d0a1a0a0000000d4948445200000001', 'hex');
    const unsupported = await refused(
      [filePart('photo.png', dataUrl('image/png', png))],
      400,
      'messages.0.content.0.file.file_data',
    );
    expect(unsupported.error).toContain('photo.png (sent as image/png)');
    expect(unsupported.error).toMatch(/Unsupported file type/);
    const byId = await refused(
      [{ type: 'file', file: { file_id: 'file-abc123' } }],
      400,
      'messages.0.content.0.file.file_id',
    );
    expect(byId.error).toMatch(/no files API/);
    await refused([{ type: 'file', file: { filename: 'x.md' } }], 400, 'messages.0.content.0.file.file_data');
  });

  it('should refuse more than 10 files, and a file over the text parser limit with 413', async () => {
    const many = Array.from({ length: 11 }, (_, i) => filePart(`f${i}.md`, dataUrl('text/plain', `note ${i}`)));
    await refused(many, 400, 'messages.0.content.10.file');
    const big = Buffer.alloc(26_000_000, 'a');
    const body = await refused([filePart('big.txt', dataUrl('text/plain', big))], 413);
    expect(body.code).toBe('PAYLOAD_TOO_LARGE');
  }, 60_000);
});
