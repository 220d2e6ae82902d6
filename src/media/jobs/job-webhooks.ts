/** What jobs need of the account's webhooks (src/webhooks/webhook.wiring.ts). */
export interface JobWebhooks {
  /** Told once when a job ends, COMPLETED or FAILED. */
  jobFinished(jobId: string): void;
  /** Refuses a job's webhook_url that the address policy or the account's endpoints do not allow. */
  checkJobWebhookUrl(accountId: string, url: string): Promise<void>;
}
