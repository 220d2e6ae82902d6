import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChatServer, type ChatServer } from '../helpers/chat.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { createAccountWithKey } from '../helpers/services.ts';

/*
 * Every REST route that reads a JSON body refuses one that is not an object (null, an array, a number, a string, a
 * boolean) with a 400 and the error body, over HTTP through the listener `npm start` serves with. The routes are
 * read from the OpenAPI document, so a new route is covered without a change here. (`POST /images/edits` with the
 * body `null` was a 500.)
 */

const TIMEOUT = 120_000;

describe(`JSON bodies that are not an object, on every REST route that takes a body (${testDatabaseKind})`, () => {
  let server: ChatServer;
  let adminSecret: string;

  beforeAll(async () => {
    server = await startChatServer();
    ({ adminSecret } = await createAccountWithKey(server.t.app.services, { credit: { USD: '10', DIEM: '10' } }));
  }, TIMEOUT);
  afterAll(async () => server?.close());

  it(
    'answers 400 with the error body to null, arrays, numbers, strings and booleans',
    { timeout: TIMEOUT },
    async () => {
      const doc = (await (await fetch(`${server.url}/api/v1/openapi.json`)).json()) as {
        paths: Record<string, Record<string, { requestBody?: { content: Record<string, unknown> } }>>;
      };
      const routes = Object.entries(doc.paths).flatMap(([template, operations]) =>
        Object.entries(operations).flatMap(([method, operation]) =>
          operation.requestBody
            ? [
                {
                  method: method.toUpperCase(),
                  path: template.replace(/\{\w+\}/g, 'ethereum-sepolia'),
                  uploadOnly: !Object.keys(operation.requestBody.content).includes('application/json'),
                },
              ]
            : [],
        ),
      );
      // The routes read from the table, so a new route is covered without a change here.
      expect(routes.map((route) => `${route.method} ${route.path}`)).toEqual(
        expect.arrayContaining([
          'POST /api/v1/images/edits',
          'POST /api/v1/chat/completions',
          'PATCH /api/v1/api_keys',
        ]),
      );
      const failures: string[] = [];
      for (const route of routes) {
        for (const body of ['null', '[]', '[{}]', '42', '-1.5', '"text"', 'true', 'false']) {
          const response = await fetch(`${server.url}${route.path}`, {
            method: route.method,
            headers: { authorization: `Bearer ${adminSecret}`, 'content-type': 'application/json' },
            body,
          });
          const text = await response.text();
          let answer: { error?: unknown; code?: unknown } = {};
          try {
            answer = JSON.parse(text) as typeof answer;
          } catch {
            // Not JSON: reported below.
          }
          // A route that takes only uploads does not read JSON at all: it refuses the content type.
          const expected = route.uploadOnly && response.status === 415 ? 'INVALID_CONTENT_TYPE' : 'INVALID_REQUEST';
          if (![400, 415].includes(response.status) || answer.code !== expected || typeof answer.error !== 'string')
            failures.push(`${route.method} ${route.path} ${body} → ${response.status} ${text.slice(0, 160)}`);
        }
      }
      expect(failures).toEqual([]);
    },
  );
});
