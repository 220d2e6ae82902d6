import { buildServer } from '../build.ts';

/** The end-to-end tests start the server as `npm start` does, from the build: make it once, fresh. */
export default async function setup(): Promise<void> {
  await buildServer();
}
