import type { CombinedError } from '@urql/core';
import { describeRequestError, describeTypedError, type TypedError } from '../lib/errors.ts';

/** An error in words, announced to screen readers; `error` is a request error or a typed result error. */
export function ErrorNotice({ error }: { error: CombinedError | TypedError | undefined }) {
  if (!error) return null;
  const text = 'graphQLErrors' in error ? describeRequestError(error) : describeTypedError(error);
  const code = 'graphQLErrors' in error ? undefined : error.code;
  return (
    <p class="error" role="alert" data-code={code}>
      {text}
    </p>
  );
}
