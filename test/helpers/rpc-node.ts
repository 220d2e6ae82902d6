import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import ganache from 'ganache';
import { concat, defineChain, keccak256, numberToHex, toHex, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { listenLocally } from './local-server.ts';

/*
 * A real local Ethereum node for the crypto RPC tests: ganache (an npm package, offline, ~1 s to start) on
 * 127.0.0.1, with one funded account whose key the tests hold, instant mining, and a tiny contract
 * (hand-assembled EVM bytecode, no compiler needed) whose calls return 42 and emit `Ping(uint256)`.
 * A counting proxy in front of it records what reaches the node and can be told to fail or stall.
 */

export const CHAIN_ID = 1337;
export const FUNDED_KEY: Hex = '0x8da4ef21b864d2cc526dbdb2a120bd2874c36c9d0a1fb7f8c63d7f7a8b41de8f';
export const funded = privateKeyToAccount(FUNDED_KEY);
export const localChain = defineChain({
  id: CHAIN_ID,
  name: 'Lagoon test chain',
  nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
  rpcUrls: { default: { http: ['http://127.0.0.1'] } },
});

export const PING_TOPIC = keccak256(toHex('Ping(uint256)'));

/** Runtime: mstore(0, 42); log1(0, 32, PING_TOPIC); return(0, 32). Init code copies it out and returns it. */
export function pingContractBytecode(): Hex {
  const runtime = concat(['0x602a600052', '0x7f', PING_TOPIC, '0x60206000a160206000f3']);
  const length = (runtime.length - 2) / 2;
  const init = concat(['0x60', numberToHex(length, { size: 1 }), '0x80600b6000396000f3']);
  return concat([init, runtime]);
}

export interface ChainNode {
  readonly url: string;
  close(): Promise<void>;
}

export async function startChainNode(): Promise<ChainNode> {
  const server = ganache.server({
    logging: { quiet: true },
    chain: { chainId: CHAIN_ID },
    wallet: { accounts: [{ secretKey: FUNDED_KEY, balance: numberToHex(10n ** 21n) }] },
    miner: { instamine: 'eager' },
  });
  await server.listen(0, '127.0.0.1');
  const address = server.address() as { port: number };
  return { url: `http://127.0.0.1:${address.port}`, close: () => server.close() };
}

/** A one-off answer for the next request that reaches the proxy. */
export type Override = (request: IncomingMessage, response: ServerResponse, forward: () => Promise<void>) => void;

export const answerStatus =
  (status: number, body = '{"error":"node overloaded"}'): Override =>
  (_request, response) => {
    response.writeHead(status, { 'content-type': 'application/json' }).end(body);
  };

export const answerRaw =
  (body: string): Override =>
  (_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' }).end(body);
  };

/** Holds the request `ms`, then forwards it (or never answers if the socket closed meanwhile). */
export const delayed =
  (ms: number): Override =>
  (_request, response, forward) => {
    const timer = setTimeout(() => void forward(), ms);
    response.once('close', () => clearTimeout(timer));
  };

export interface CountingProxy {
  readonly url: string;
  /** Bodies (parsed JSON) of the requests that reached this proxy, in order. */
  readonly requests: unknown[];
  queue(...overrides: Override[]): void;
  close(): Promise<void>;
}

/** Forwards to `target`, recording each request; queued overrides answer the next requests instead. */
export async function startCountingProxy(target: string): Promise<CountingProxy> {
  const requests: unknown[] = [];
  const overrides: Override[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      requests.push(JSON.parse(body) as unknown);
      const forward = async () => {
        try {
          const answer = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
          const text = await answer.text();
          if (!response.destroyed) response.writeHead(answer.status, { 'content-type': 'application/json' }).end(text);
        } catch {
          if (!response.destroyed) response.writeHead(502).end();
        }
      };
      const override = overrides.shift();
      if (override) override(request, response, forward);
      else void forward();
    });
  });
  const listening = await listenLocally(server);
  return {
    url: listening.url,
    requests,
    queue: (...more) => overrides.push(...more),
    close: listening.close,
  };
}

/** A URL where nothing listens (connection refused). */
export async function deadUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}
