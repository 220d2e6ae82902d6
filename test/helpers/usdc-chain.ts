import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ganache from 'ganache';
import solc from 'solc';
import {
  createPublicClient,
  createWalletClient,
  defineChain,
  http,
  numberToHex,
  type Abi,
  type Address,
  type Hex,
  type PublicClient,
} from 'viem';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';

/*
 * A real local chain for the x402 top-up tests: ganache in-process with chain id 8453 (Base), so the token's
 * EIP-712 domain (block.chainid) is the one Lagoon verifies, and an EIP-3009 USDC-like token compiled from
 * test/fixtures/contracts/TestUsdc.sol with solc-js and deployed by the caller; EIP-1271 contract wallets
 * (TestContractWallet.sol, compiled in the same solc run) are deployed on demand.
 */

export const BASE_CHAIN_ID = 8453;

export const baseLocal = defineChain({
  id: BASE_CHAIN_ID,
  name: 'Lagoon local Base',
  nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
  rpcUrls: { default: { http: ['http://127.0.0.1'] } },
});

/** Fixed keys: deployer (token owner), settler (pays gas for transferWithAuthorization), receiver, payers. */
export const KEYS = {
  deployer: '0x1111111111111111111111111111111111111111111111111111111111111111',
  settler: '0x2222222222222222222222222222222222222222222222222222222222222222',
  receiver: '0x3333333333333333333333333333333333333333333333333333333333333333',
  payer: '0x4444444444444444444444444444444444444444444444444444444444444444',
  payer2: '0x5555555555555555555555555555555555555555555555555555555555555555',
  facilitator: '0x6666666666666666666666666666666666666666666666666666666666666666',
} as const satisfies Record<string, Hex>;

export interface UsdcChain {
  readonly url: string;
  readonly token: Address;
  readonly abi: Abi;
  readonly client: PublicClient;
  account(name: keyof typeof KEYS): PrivateKeyAccount;
  balanceOf(address: Address): Promise<bigint>;
  mint(to: Address, units: bigint): Promise<void>;
  setBlocked(address: Address, blocked: boolean): Promise<void>;
  /** Mines an empty block (its timestamp is now: what moves the chain's clock past a validBefore). */
  mine(): Promise<void>;
  /** Stops or starts mining: sent transactions wait in the pool meanwhile, then go in by fee. */
  setMining(on: boolean): Promise<void>;
  /** Deploys an EIP-1271 contract wallet (TestContractWallet.sol) whose signatures are `owner`'s; its address. */
  deployContractWallet(owner: Address): Promise<Address>;
  close(): Promise<void>;
}

const CONTRACTS_DIR = join(import.meta.dirname, '../fixtures/contracts');
/** Every fixture contract, compiled together: one solc-js run (about 10 s) serves them all. */
const CONTRACTS = ['TestUsdc', 'TestContractWallet'] as const;
type ContractName = (typeof CONTRACTS)[number];

interface Artifact {
  abi: Abi;
  bytecode: Hex;
}

let compiled: Record<ContractName, Artifact> | undefined;

/**
 * Compiles the fixture contracts in one solc-js run, once per process and once per source text across runs (the
 * artifacts are cached in the temp dir: solc-js takes seconds).
 */
export function compileFixtures(): Record<ContractName, Artifact> {
  if (compiled) return compiled;
  const sources = Object.fromEntries(
    CONTRACTS.map((name) => [`${name}.sol`, { content: readFileSync(join(CONTRACTS_DIR, `${name}.sol`), 'utf8') }]),
  );
  const digest = createHash('sha256').update(JSON.stringify(sources)).update(solc.version()).digest('hex').slice(0, 16);
  const dir = join(tmpdir(), 'lagoon-solc-cache');
  const cached = join(dir, `fixtures-${digest}.json`);
  if (existsSync(cached))
    return (compiled = JSON.parse(readFileSync(cached, 'utf8')) as Record<ContractName, Artifact>);
  const input = {
    language: 'Solidity',
    sources,
    settings: {
      // ganache 7 runs the Shanghai rules: newer opcodes (MCOPY, TSTORE) would not run.
      evmVersion: 'shanghai',
      optimizer: { enabled: true, runs: 200 },
      outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } },
    },
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input))) as {
    errors?: { severity: string; formattedMessage: string }[];
    contracts: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string } } }>>;
  };
  const errors = (output.errors ?? []).filter((error) => error.severity === 'error');
  if (errors.length > 0) throw new Error(errors.map((error) => error.formattedMessage).join('\n'));
  const artifacts = Object.fromEntries(
    CONTRACTS.map((name) => {
      const contract = output.contracts[`${name}.sol`]?.[name];
      if (!contract) throw new Error(`solc produced no ${name}`);
      return [name, { abi: contract.abi, bytecode: `0x${contract.evm.bytecode.object}` }];
    }),
  ) as Record<ContractName, Artifact>;
  mkdirSync(dir, { recursive: true });
  writeFileSync(cached, JSON.stringify(artifacts));
  return (compiled = artifacts);
}

/** Starts ganache on a free port with every KEYS account funded with ETH, and deploys the token. */
export async function startUsdcChain(): Promise<UsdcChain> {
  const server = ganache.server({
    logging: { quiet: true },
    chain: { chainId: BASE_CHAIN_ID },
    wallet: {
      accounts: Object.values(KEYS).map((secretKey) => ({ secretKey, balance: numberToHex(10n ** 21n) })),
    },
    miner: { instamine: 'eager' },
  });
  await server.listen(0, '127.0.0.1');
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const chain = { ...baseLocal, rpcUrls: { default: { http: [url] } } };
  const client = createPublicClient({ chain, transport: http(url) }) as PublicClient;
  const deployer = createWalletClient({ chain, transport: http(url), account: privateKeyToAccount(KEYS.deployer) });
  const { abi, bytecode } = compileFixtures().TestUsdc;
  const deployHash = await deployer.deployContract({ abi, bytecode });
  const receipt = await client.waitForTransactionReceipt({ hash: deployHash });
  const token = receipt.contractAddress;
  if (!token) throw new Error('TestUsdc was not deployed');

  async function ownerCall(functionName: string, args: readonly unknown[]) {
    const hash = await deployer.writeContract({ address: token as Address, abi, functionName, args });
    await client.waitForTransactionReceipt({ hash });
  }

  return {
    url,
    token,
    abi,
    client,
    account: (name) => privateKeyToAccount(KEYS[name]),
    async balanceOf(address) {
      return (await client.readContract({ address: token, abi, functionName: 'balanceOf', args: [address] })) as bigint;
    },
    mint: (to, units) => ownerCall('mint', [to, units]),
    setBlocked: (address, blocked) => ownerCall('setBlocked', [address, blocked]),
    async mine() {
      await client.request({ method: 'evm_mine' as never, params: [] as never });
    },
    async setMining(on) {
      await client.request({ method: (on ? 'miner_start' : 'miner_stop') as never, params: [] as never });
    },
    async deployContractWallet(owner) {
      const wallet = compileFixtures().TestContractWallet;
      const hash = await deployer.deployContract({ abi: wallet.abi, bytecode: wallet.bytecode, args: [owner] });
      const { contractAddress } = await client.waitForTransactionReceipt({ hash });
      if (!contractAddress) throw new Error('TestContractWallet was not deployed');
      return contractAddress;
    },
    close: () => server.close(),
  };
}
