import { getOperationAST, Kind, type DocumentNode } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { nameOperation, tracingOn } from '../src/observability/tracing.ts';

/**
 * Names the request's server span by its GraphQL operation: the operation type and its first root field
 * (`mutation chatCompletion`), both bounded by the schema, never the client's free-form operation name.
 * Tracing off: the hooks return at once.
 */
export function useOperationSpanNames(): Plugin {
  const name = (document: DocumentNode, operationName: string | null | undefined) => {
    if (!tracingOn()) return;
    const operation = getOperationAST(document, operationName);
    if (!operation) return;
    const field = operation.selectionSet.selections.find((selection) => selection.kind === Kind.FIELD);
    nameOperation(operation.operation, field?.kind === Kind.FIELD ? field.name.value : undefined);
  };
  return {
    onExecute: ({ args }) => name(args.document, args.operationName),
    onSubscribe: ({ args }) => name(args.document, args.operationName),
  };
}
