import { z } from 'zod';

/** POST /audio/retrieve and /video/retrieve. */
export const RetrieveJobInput = z.object({
  model: z.string().min(1).max(200).describe('The model the job was queued with'),
  queue_id: z.string().min(1).max(100).describe('The queue_id POST /<kind>/queue returned'),
  delete_media_on_completion: z
    .boolean()
    .optional()
    .describe('Delete the media once this answer has sent it (default false)'),
});

/** POST /audio/complete and /video/complete. */
export const CompleteJobInput = z.object({
  model: z.string().min(1).max(200).describe('The model the job was queued with'),
  queue_id: z.string().min(1).max(100).describe('The queue_id POST /<kind>/queue returned'),
});
