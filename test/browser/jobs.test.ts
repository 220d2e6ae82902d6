import { describe, expect, it } from 'vitest';
import { collectPageErrors, consoleSuite, screenshots, signIn } from '../helpers/browser.ts';
import { scaled } from '../helpers/time-scale.ts';

/**
 * The Jobs page in chromium: queue a video on the built-in simulator, watch it go live to COMPLETED through
 * jobUpdated, play it (the video element loads its metadata from the signed URL), then complete and delete it.
 */
describe('web console: jobs (browser)', () => {
  const suite = consoleSuite('browser-jobs', { creditUsd: '5' });

  it('queues a video, sees it reach COMPLETED live, plays it, and completes it', async () => {
    const page = await suite.browser.newPage();
    const errors = collectPageErrors(page);
    await signIn(page, suite.lagoon.url, suite.lagoon.adminKey);
    await page.getByRole('link', { name: 'Jobs' }).click();
    await page.getByRole('heading', { name: 'Jobs', level: 1 }).waitFor();
    await page.getByLabel('Model').selectOption('lagoon-sim-video');
    await page.getByLabel('Prompt').fill('a lagoon at dawn');
    await page.getByRole('button', { name: 'Queue job' }).click();

    const job = page.getByTestId('job').first();
    await job.waitFor();
    await expect
      .poll(() => job.getAttribute('data-status'), { timeout: scaled(120_000), interval: 250 })
      .toBe('COMPLETED');
    const player = job.locator('video');
    await expect
      .poll(
        () => player.evaluate((video: HTMLVideoElement) => ({ ready: video.readyState, duration: video.duration })),
        { timeout: scaled(30_000) },
      )
      .toSatisfy((state: { ready: number; duration: number }) => state.ready >= 1 && state.duration > 0);
    await screenshots(page, 'jobs-completed', () => player.waitFor());

    const id = await job.getAttribute('data-job-id');
    await job.getByRole('button', { name: 'Complete and delete' }).click();
    await page.locator(`[data-job-id="${id}"]`).waitFor({ state: 'detached' });
    // Gone for the API as well: a fresh list no longer has it.
    await page.reload();
    await page.getByRole('heading', { name: 'Queue a job' }).waitFor();
    expect(await page.locator(`[data-job-id="${id}"]`).count()).toBe(0);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('shows a refused job in words', async () => {
    const page = await suite.browser.newPage();
    await signIn(page, suite.lagoon.url, suite.lagoon.adminKey);
    await page.goto(`${suite.lagoon.url}/dashboard/jobs`);
    await page.getByLabel('Model').selectOption('lagoon-sim-video');
    // No prompt: the API's ValidationError, said on the page.
    await page.getByRole('button', { name: 'Queue job' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('Check the values entered');
    await page.close();
  });
});
