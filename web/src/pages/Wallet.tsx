import { useQuery, useSubscription } from '@urql/preact';
import { ErrorNotice } from '../components/ErrorNotice.tsx';
import type { WalletPageQuery } from '../gql/graphql.ts';
import { graphql } from '../gql/index.ts';
import { useCredential } from '../lib/auth.ts';
import { formatAmount, formatDate } from '../lib/format.ts';

const WALLET_PAGE = graphql(`
  query WalletPage($signedIn: Boolean!) {
    wallet @include(if: $signedIn) {
      address
      balance {
        balanceUsd
        canConsume
        minimumTopUpUsd
        suggestedTopUpUsd
      }
      ledger(first: 50) {
        edges {
          node {
            id
            type
            amount
            balanceAfter
            createdAt
            modelId
          }
        }
      }
    }
    topUpRequirements {
      scheme
      network
      amount
      amountUsd
      asset
      payTo
      maxTimeoutSeconds
    }
  }
`);

const WALLET_BALANCE = graphql(`
  subscription WalletBalanceLive {
    walletBalance {
      balanceUsd
      canConsume
      minimumTopUpUsd
      suggestedTopUpUsd
    }
  }
`);

type Requirement = WalletPageQuery['topUpRequirements'][number];

function TopUp({ requirements }: { requirements: readonly Requirement[] }) {
  if (requirements.length === 0)
    return <p class="muted">This server offers no top-ups (no x402 receiver is configured).</p>;
  return (
    <div class="table-wrap">
      <table data-testid="top-up-requirements">
        <thead>
          <tr>
            <th>Scheme</th>
            <th>Network</th>
            <th>Smallest top-up</th>
            <th>Pay to</th>
            <th>Token (USDC)</th>
          </tr>
        </thead>
        <tbody>
          {requirements.map((requirement) => (
            <tr key={`${requirement.network}-${requirement.payTo}`}>
              <td>{requirement.scheme}</td>
              <td>{requirement.network}</td>
              <td>{formatAmount(requirement.amountUsd, 'USD')}</td>
              <td>
                <code>{requirement.payTo}</code>
              </td>
              <td>
                <code>{requirement.asset}</code>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** A wallet caller's credit (live from `walletBalance`), its transactions, and how to top up (x402). */
export function Wallet() {
  const credential = useCredential();
  const signedIn = credential?.kind === 'wallet';
  const [{ data, error, fetching }] = useQuery({ query: WALLET_PAGE, variables: { signedIn } });
  const [live] = useSubscription({ query: WALLET_BALANCE, pause: !signedIn });
  const wallet = data?.wallet;
  const balance = live.data?.walletBalance ?? wallet?.balance;
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title">Wallet</h1>
      <ErrorNotice error={error ?? live.error} />
      {!data && fetching && <p class="muted">Loading…</p>}
      {!signedIn && <p class="muted">Sign in with a wallet to see its credit and transactions.</p>}
      {wallet && balance && (
        <>
          <p>
            Signed in as <code>{wallet.address}</code>
          </p>
          <div class="stats">
            <div class="stat" data-testid="wallet-balance">
              <h3>Credit</h3>
              <p class="figure">{formatAmount(balance.balanceUsd, 'USD')}</p>
              <p class="muted">{balance.canConsume ? 'Calls can be paid' : 'Below the minimum: top up'}</p>
            </div>
            <div class="stat">
              <h3>Top-up</h3>
              <p class="figure">{formatAmount(balance.suggestedTopUpUsd, 'USD')}</p>
              <p class="muted">suggested; at least {formatAmount(balance.minimumTopUpUsd, 'USD')}</p>
            </div>
          </div>
          <h2>Transactions</h2>
          {wallet.ledger.edges.length === 0 ? (
            <p class="muted">No transactions yet.</p>
          ) : (
            <div class="table-wrap">
              <table data-testid="wallet-transactions">
                <thead>
                  <tr>
                    <th>When</th>
                    <th>Type</th>
                    <th>Amount</th>
                    <th>Balance after</th>
                    <th>Model</th>
                  </tr>
                </thead>
                <tbody>
                  {wallet.ledger.edges.map(({ node }) => (
                    <tr key={node.id}>
                      <td>{formatDate(node.createdAt)}</td>
                      <td>{node.type}</td>
                      <td>{formatAmount(node.amount, 'USD')}</td>
                      <td>{formatAmount(node.balanceAfter, 'USD')}</td>
                      <td>{node.modelId || '—'}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </>
      )}
      {data && (
        <>
          <h2>Top up with USDC (x402)</h2>
          <p class="muted">
            Pay with an EIP-3009 USDC transfer on Base through <code>POST /api/v1/x402/top-up</code>; the credit arrives
            once it settles.
          </p>
          <TopUp requirements={data.topUpRequirements} />
        </>
      )}
    </section>
  );
}
