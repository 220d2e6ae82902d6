import { useMutation } from '@urql/preact';
import { useState } from 'preact/hooks';
import { ErrorNotice } from '../../components/ErrorNotice.tsx';
import type { Currency, OperatorAdjustmentFieldsFragment } from '../../gql/graphql.ts';
import { typedErrorOf, type TypedError } from '../../lib/errors.ts';
import { OPERATOR_CREDIT, OPERATOR_DEBIT } from './operator-operations.ts';

const CURRENCIES: readonly Currency[] = ['USD', 'DIEM'];

/** Credit or debit one account with a reason; the API records it as a ledger entry and answers that entry. */
export function AdjustForm({
  account,
  onDone,
}: {
  account: { id: string; name: string };
  onDone: (adjustment: OperatorAdjustmentFieldsFragment) => void;
}) {
  const [direction, setDirection] = useState<'credit' | 'debit'>('credit');
  const [currency, setCurrency] = useState<Currency>('USD');
  const [amount, setAmount] = useState('');
  const [reason, setReason] = useState('');
  const [problem, setProblem] = useState<TypedError>();
  const [credited, credit] = useMutation(OPERATOR_CREDIT);
  const [debited, debit] = useMutation(OPERATOR_DEBIT);
  const busy = credited.fetching || debited.fetching;

  const submit = async (event: Event) => {
    event.preventDefault();
    setProblem(undefined);
    const variables = { accountId: account.id, amount: amount.trim(), currency, reason: reason.trim() };
    const answer =
      direction === 'credit'
        ? (await credit(variables)).data?.operatorCredit
        : (await debit(variables)).data?.operatorDebit;
    if (answer && 'data' in answer) {
      onDone(answer.data);
      setAmount('');
      setReason('');
    } else setProblem(typedErrorOf(answer));
  };

  return (
    <form class="card form-grid" onSubmit={submit} aria-label={`Credit or debit ${account.name}`}>
      <h3>
        Credit or debit <span data-testid="adjust-account">{account.name}</span>
      </h3>
      <label for="adjust-direction">Operation</label>
      <select
        id="adjust-direction"
        value={direction}
        onChange={(event) => setDirection(event.currentTarget.value === 'debit' ? 'debit' : 'credit')}
      >
        <option value="credit">Credit (add funds)</option>
        <option value="debit">Debit (remove funds)</option>
      </select>
      <label for="adjust-currency">Currency</label>
      <select
        id="adjust-currency"
        value={currency}
        onChange={(event) => setCurrency(event.currentTarget.value === 'DIEM' ? 'DIEM' : 'USD')}
      >
        {CURRENCIES.map((value) => (
          <option key={value}>{value}</option>
        ))}
      </select>
      <label for="adjust-amount">Amount</label>
      <input
        id="adjust-amount"
        inputMode="decimal"
        placeholder="12.50"
        value={amount}
        onInput={(event) => setAmount(event.currentTarget.value)}
      />
      <label for="adjust-reason">Reason (kept in the ledger)</label>
      <input
        id="adjust-reason"
        value={reason}
        maxLength={500}
        onInput={(event) => setReason(event.currentTarget.value)}
      />
      <button type="submit" disabled={busy}>
        {direction === 'credit' ? 'Credit account' : 'Debit account'}
      </button>
      <ErrorNotice error={credited.error ?? debited.error ?? problem} />
    </form>
  );
}
