import { Client, fetchExchange } from '@urql/core';
import { useState } from 'preact/hooks';
import { graphql } from '../gql/index.ts';
import { signIn, type Credential } from '../lib/auth.ts';
import { describeRequestError } from '../lib/errors.ts';
import { signInHeader, siweMessage, utf8Hex } from '../lib/siwe-message.ts';
import '../components/forms.css';

const CHALLENGE = graphql(`
  query WalletSignInChallenge {
    walletSignInChallenge {
      domain
      uri
      version
      nonce
      issuedAt
      expirationTime
      statement
      chainId
    }
  }
`);

const WALLET_CHECK = graphql(`
  query WalletSignInCheck {
    wallet {
      address
    }
  }
`);

/** An EIP-1193 provider as a browser wallet injects it. */
interface Eip1193Provider {
  request(args: { method: string; params?: readonly unknown[] }): Promise<unknown>;
}

function injectedProvider(): Eip1193Provider | undefined {
  const candidate = (window as { ethereum?: Partial<Eip1193Provider> }).ethereum;
  return typeof candidate?.request === 'function' ? (candidate as Eip1193Provider) : undefined;
}

const client = (headers: Record<string, string>) =>
  new Client({ url: '/graphql', exchanges: [fetchExchange], fetchOptions: { headers } });

/**
 * The SIGN-IN-WITH-X flow: the wallet's address (eth_requestAccounts), a fresh challenge from the API, the
 * EIP-4361 message signed with personal_sign, then one query with the header before keeping it as the credential.
 */
async function walletSignIn(provider: Eip1193Provider): Promise<Credential | string> {
  const accounts = (await provider.request({ method: 'eth_requestAccounts' })) as unknown;
  const address = Array.isArray(accounts) && typeof accounts[0] === 'string' ? accounts[0] : undefined;
  if (!address) return 'The wallet shared no account.';
  const challenge = await client({}).query(CHALLENGE, {}).toPromise();
  if (challenge.error || !challenge.data)
    return challenge.error ? describeRequestError(challenge.error) : 'No challenge.';
  const fields = challenge.data.walletSignInChallenge;
  const message = siweMessage({ ...fields, address });
  const signature = await provider.request({ method: 'personal_sign', params: [utf8Hex(message), address] });
  if (typeof signature !== 'string') return 'The wallet returned no signature.';
  const header = signInHeader(address, message, signature, fields.chainId);
  const check = await client({ 'sign-in-with-x': header }).query(WALLET_CHECK, {}).toPromise();
  if (check.error || !check.data) return check.error ? describeRequestError(check.error) : 'No answer.';
  return { bearer: header, kind: 'wallet', label: check.data.wallet.address };
}

/** "Sign in with a wallet", under the key form (web/src/pages/sign-in-methods.ts). */
export function WalletSignIn() {
  const [problem, setProblem] = useState<string>();
  const [busy, setBusy] = useState(false);
  const start = async () => {
    const provider = injectedProvider();
    if (!provider) return setProblem('No wallet found in this browser (an EIP-1193 provider, window.ethereum).');
    setBusy(true);
    setProblem(undefined);
    try {
      const outcome = await walletSignIn(provider);
      if (typeof outcome === 'string') setProblem(outcome);
      else signIn(outcome);
    } catch (error) {
      // A wallet refusing (the user rejected, code 4001) throws; say what it said.
      setProblem(`The wallet refused: ${error instanceof Error ? error.message : String(error)}`);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="card wallet-signin">
      <h2>Wallet</h2>
      <p class="muted">Sign a SIGN-IN-WITH-X message (Base, chain 8453); wallet credit pays for calls.</p>
      <button type="button" onClick={start} disabled={busy}>
        {busy ? 'Waiting for the wallet…' : 'Connect a wallet'}
      </button>
      {problem && (
        <p class="error" role="alert">
          {problem}
        </p>
      )}
    </div>
  );
}
