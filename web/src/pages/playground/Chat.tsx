/* The Playground's chat: one prompt streamed through `chatCompletionStream`, the text growing as tokens arrive. */
import type { CombinedError } from '@urql/core';
import { useClient } from '@urql/preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ErrorNotice } from '../../components/ErrorNotice.tsx';
import { formatAmount } from '../../lib/format.ts';
import { ModelSelect } from './ModelSelect.tsx';
import { PLAYGROUND_CHAT } from './operations.ts';

type Status = 'idle' | 'streaming' | 'done' | 'failed';

interface Tokens {
  readonly promptTokens: number;
  readonly completionTokens: number;
}

interface Charge {
  readonly amount: string;
  readonly currency: string;
}

export function Chat() {
  const client = useClient();
  const [text, setText] = useState('');
  const [status, setStatus] = useState<Status>('idle');
  const [error, setError] = useState<CombinedError>();
  const [tokens, setTokens] = useState<Tokens>();
  const [charge, setCharge] = useState<Charge>();
  const stop = useRef<(() => void) | undefined>(undefined);
  useEffect(() => () => stop.current?.(), []);

  const submit = (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    stop.current?.();
    setText('');
    setError(undefined);
    setTokens(undefined);
    setCharge(undefined);
    setStatus('streaming');
    const input = {
      model: String(form.get('model') ?? ''),
      messages: [{ role: 'USER' as const, content: String(form.get('prompt') ?? '') }],
    };
    const subscription = client.subscription(PLAYGROUND_CHAT, { input }).subscribe((result) => {
      if (result.error) {
        setError(result.error);
        setStatus('failed');
        subscription.unsubscribe();
        return;
      }
      const chunk = result.data?.chatCompletionStream;
      if (!chunk) return;
      const delta = chunk.choices.map((choice) => choice.delta.content ?? '').join('');
      if (delta) setText((before) => before + delta);
      // The last chunk: the tokens billed and what they cost.
      if (chunk.usage) {
        setTokens(chunk.usage);
        if (chunk.charged && chunk.currency) setCharge({ amount: chunk.charged, currency: chunk.currency });
        setStatus('done');
      }
    });
    stop.current = () => subscription.unsubscribe();
  };

  return (
    <section class="card" aria-labelledby="chat-title">
      <h2 id="chat-title">Chat</h2>
      <form onSubmit={submit}>
        <ModelSelect id="chat-model" type="TEXT" />
        <label for="chat-prompt">Message</label>
        <textarea id="chat-prompt" name="prompt" rows={3} required />
        <button type="submit" disabled={status === 'streaming'}>
          Send
        </button>
      </form>
      <ErrorNotice error={error} />
      <output class="reply" data-testid="chat-output" data-status={status} aria-live="polite">
        {text}
      </output>
      <p class="muted" data-testid="chat-cost">
        {status === 'streaming' && 'Streaming…'}
        {tokens && `${tokens.promptTokens} prompt + ${tokens.completionTokens} completion tokens. `}
        {charge && `Cost: ${formatAmount(charge.amount, charge.currency)}`}
      </p>
    </section>
  );
}
