import { expect } from 'vitest';

/** After a barrage of bad requests: the server at `url` still answers /healthz and a GraphQL query. */
export async function expectStillServing(url: string): Promise<void> {
  expect((await fetch(`${url}/healthz`)).status).toBe(200);
  const models = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: '{ models { id } }' }),
  });
  expect(models.status).toBe(200);
}
