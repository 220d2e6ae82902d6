import { Client, fetchExchange } from '@urql/core';
import { useState } from 'preact/hooks';
import { graphql } from '../gql/index.ts';
import { kindOfSecret, signIn, type Credential } from '../lib/auth.ts';
import { describeRequestError } from '../lib/errors.ts';
import { SIGN_IN_METHODS } from './sign-in-methods.ts';

const ACCOUNT = graphql(`
  query SignInAccount {
    account {
      id
      name
    }
  }
`);

const OPERATOR = graphql(`
  query SignInOperator {
    operatorJobQueue {
      queued
    }
  }
`);

/** Checks the secret with one query before keeping it: a mistyped key is refused here, not on every page. */
async function verify(secret: string): Promise<Credential | string> {
  const kind = kindOfSecret(secret);
  const client = new Client({
    url: '/graphql',
    exchanges: [fetchExchange],
    fetchOptions: { headers: { authorization: `Bearer ${secret}` } },
  });
  if (kind === 'operator') {
    const result = await client.query(OPERATOR, {}).toPromise();
    if (result.error) return describeRequestError(result.error);
    return { bearer: secret, kind, label: 'Operator' };
  }
  const result = await client.query(ACCOUNT, {}).toPromise();
  if (result.error || !result.data) return result.error ? describeRequestError(result.error) : 'No answer.';
  return { bearer: secret, kind, label: result.data.account.name };
}

export function SignIn() {
  const [secret, setSecret] = useState('');
  const [problem, setProblem] = useState<string>();
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    const trimmed = secret.trim();
    if (!trimmed) return setProblem('Paste an API key or an operator token.');
    setBusy(true);
    setProblem(undefined);
    const outcome = await verify(trimmed);
    setBusy(false);
    if (typeof outcome === 'string') setProblem(outcome);
    else signIn(outcome);
  };
  return (
    <main class="signin" id="main">
      <h1>Lagoon console</h1>
      <form onSubmit={submit} class="card">
        <label for="secret">API key or operator token</label>
        <input
          id="secret"
          name="secret"
          type="password"
          autocomplete="off"
          spellcheck={false}
          value={secret}
          onInput={(event) => setSecret(event.currentTarget.value)}
          aria-describedby="secret-help"
        />
        <p id="secret-help" class="muted">
          Kept in this tab only; closing the tab signs out. Keys are made with <code>lagoon keys create</code>.
        </p>
        <button type="submit" disabled={busy}>
          {busy ? 'Checking…' : 'Sign in'}
        </button>
        {problem && (
          <p class="error" role="alert">
            {problem}
          </p>
        )}
      </form>
      {SIGN_IN_METHODS.map((Method, index) => (
        <Method key={index} />
      ))}
    </main>
  );
}
