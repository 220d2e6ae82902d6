import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { collectPageErrors, consoleSuite, screenshots, signIn } from '../helpers/browser.ts';
import { scaled } from '../helpers/time-scale.ts';

async function open(page: Page, title: string): Promise<void> {
  await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: title }).click();
  await page.getByRole('heading', { name: title, level: 1 }).waitFor();
}

async function expectNoHorizontalOverflow(page: Page): Promise<void> {
  await page.setViewportSize({ width: 390, height: 800 });
  expect(await page.evaluate(() => document.scrollingElement!.scrollWidth)).toBeLessThanOrEqual(390);
  await page.setViewportSize({ width: 1280, height: 900 });
}

/** Every (text length, status) the chat's output showed, recorded in the page as the DOM changed. */
async function recordChatOutput(page: Page): Promise<void> {
  await page.evaluate(() => {
    const output = document.querySelector('[data-testid="chat-output"]')!;
    const seen: [number, string][] = [];
    (window as unknown as { chatSeen: typeof seen }).chatSeen = seen;
    const note = () => seen.push([output.textContent?.length ?? 0, output.getAttribute('data-status') ?? '']);
    new MutationObserver(note).observe(output, {
      childList: true,
      characterData: true,
      subtree: true,
      attributes: true,
    });
  });
}

/**
 * The Playground and Usage pages in chromium: a chat streamed token by token then its cost, its charge in the
 * usage table (filtered, paged) and in the CSV export, an image generated and speech that plays, and the usage
 * filtered by kind.
 */
describe('web console: playground and usage (browser)', () => {
  let page: Page;
  let errors: string[];
  const suite = consoleSuite('browser-playground', {
    creditUsd: '20',
    prepare: async () => {
      page = await suite.browser.newPage();
      errors = collectPageErrors(page);
      await signIn(page, suite.lagoon.url, suite.lagoon.adminKey);
    },
  });

  it('streams a chat: text appears before the stream ends, then its cost', async () => {
    await open(page, 'Playground');
    await expect.poll(() => page.locator('#chat-model option').count()).toBeGreaterThan(0);
    await recordChatOutput(page);
    await page.getByLabel('Message').fill('Tell me a short story about a suite.lagoon.');
    await page.getByRole('button', { name: 'Send' }).click();
    const output = page.getByTestId('chat-output');
    await expect.poll(() => output.getAttribute('data-status'), { timeout: scaled(30_000) }).toBe('done');
    expect((await output.textContent())!.length).toBeGreaterThan(0);
    await expect
      .poll(() => page.getByTestId('chat-cost').textContent(), { timeout: scaled(20_000) })
      .toMatch(/Cost: \$\d/);
    const seen = await page.evaluate(() => (window as unknown as { chatSeen: [number, string][] }).chatSeen);
    // Tokens were shown as they arrived: some text was on screen while the stream was still open.
    expect(seen.some(([length, status]) => length > 0 && status === 'streaming')).toBe(true);
    await screenshots(page, 'playground-chat');
    await expectNoHorizontalOverflow(page);
  });

  it('shows the chat’s charge in the usage table, filters it, and exports it as CSV', async () => {
    const model = await page.locator('#chat-model').inputValue();
    await open(page, 'Usage');
    const table = page.getByTestId('usage-table');
    await expect.poll(() => table.textContent()).toContain(model);
    expect(await page.getByTestId('usage-count').textContent()).toMatch(/^[1-9]\d* entries/);
    await screenshots(page, 'usage-table', () => table.waitFor());
    await expectNoHorizontalOverflow(page);

    // The export holds the whole filtered range, with the chat's lines.
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Export CSV' }).click(),
    ]);
    const csv = readFileSync((await download.path())!, 'utf8');
    const lines = csv.trim().split('\r\n');
    expect(lines[0]).toBe('timestamp,model,kind,sku,line,units,amount,currency,key');
    expect(lines.some((line) => line.includes(model))).toBe(true);

    // A range with nothing in it: no rows, and the export says so.
    await page.getByLabel('From').fill('2001-01-01');
    await page.getByLabel('To').fill('2001-01-02');
    await page.getByRole('button', { name: 'Apply' }).click();
    await expect.poll(() => page.getByTestId('usage-count').textContent()).toBe('0 entries');
    expect(await table.locator('tbody tr').count()).toBe(0);
  });

  it('generates an image and shows it with its cost', async () => {
    await open(page, 'Playground');
    await expect.poll(() => page.locator('#image-model option').count()).toBeGreaterThan(0);
    await page.getByLabel('Prompt').fill('a calm lagoon at dawn');
    await page.getByRole('button', { name: 'Generate' }).click();
    const image = page.getByRole('img', { name: 'Generated' });
    const section = page.getByRole('region', { name: 'Image' });
    await expect.poll(() => section.textContent(), { timeout: scaled(60_000) }).toContain('Cost:');
    await expect.poll(() => image.evaluate((img: HTMLImageElement) => img.naturalWidth)).toBeGreaterThan(0);
    expect(await page.getByTestId('image-cost').textContent()).toMatch(/Cost: \$\d/);
  });

  it('speaks a text: the audio player has the file and its duration', async () => {
    await expect.poll(() => page.locator('#speech-model option').count()).toBeGreaterThan(0);
    await page.getByLabel('Text').fill('Hello from the suite.lagoon.');
    await page.getByRole('button', { name: 'Speak' }).click();
    const audio = page.locator('audio');
    const section = page.getByRole('region', { name: 'Speech' });
    await expect.poll(() => section.textContent(), { timeout: scaled(60_000) }).toContain('Cost:');
    expect(await audio.getAttribute('src')).toBeTruthy();
    await expect
      .poll(() => audio.evaluate((element: HTMLAudioElement) => element.duration), { timeout: scaled(30_000) })
      .toBeGreaterThan(0);
    expect(await page.getByTestId('speech-cost').textContent()).toMatch(/Cost: \$\d/);
    await screenshots(page, 'playground-media');
    await expectNoHorizontalOverflow(page);
    expect(errors).toEqual([]);
  });

  it('filters the usage by kind, in the table and the CSV export', async () => {
    await open(page, 'Usage');
    const table = page.getByTestId('usage-table');
    const count = page.getByTestId('usage-count');
    await expect.poll(() => count.textContent()).toMatch(/^\d+ entries/);
    const all = Number((await count.textContent())!.split(' ')[0]);
    const kinds = () => table.locator('tbody tr td:nth-child(3)').allTextContents();
    const seen: Record<string, number> = {};
    for (const kind of ['LLM', 'IMAGE', 'TTS']) {
      await page.getByLabel('Kind').selectOption(kind);
      await page.getByRole('button', { name: 'Apply' }).click();
      await expect.poll(async () => [...new Set(await kinds())]).toEqual([kind]);
      seen[kind] = Number((await count.textContent())!.split(' ')[0]);
      expect(seen[kind], kind).toBeGreaterThan(0);
      expect((await kinds()).length).toBe(Math.min(seen[kind], 50));
    }
    // The chat, the image and the speech are all there is: the kinds add up to the whole.
    expect(seen.LLM! + seen.IMAGE! + seen.TTS!).toBe(all);

    // The export takes the same filter: only TTS lines, as many as the count.
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Export CSV' }).click(),
    ]);
    const lines = readFileSync((await download.path())!, 'utf8')
      .trim()
      .split('\r\n')
      .slice(1);
    expect(lines.length).toBe(seen.TTS);
    expect(lines.every((line) => line.split(',')[2] === 'TTS')).toBe(true);

    await page.getByLabel('Kind').selectOption('');
    await page.getByRole('button', { name: 'Apply' }).click();
    await expect.poll(() => count.textContent()).toBe(`${all} entries`);
    expect(errors).toEqual([]);
  });
});
