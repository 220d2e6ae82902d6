import { costLimitRule } from '@escape.tech/graphql-armor-cost-limit';
import { maxAliasesRule } from '@escape.tech/graphql-armor-max-aliases';
import { maxDepthRule } from '@escape.tech/graphql-armor-max-depth';
import { maxDirectivesRule } from '@escape.tech/graphql-armor-max-directives';
import { maxTokensPlugin } from '@escape.tech/graphql-armor-max-tokens';
import {
  GraphQLError,
  Kind,
  type ASTVisitor,
  type SelectionSetNode,
  type ValidationContext,
  type ValidationRule,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { GraphQLLimits } from '../src/config.ts';
import { PAID_ROOT_FIELDS } from './paid-fields.ts';

/**
 * The bounds every document is checked against before anything runs, on /graphql and /graphql/stream alike,
 * introspection included (1,000 aliased `__schema` selections used to answer 37 MB in 10–19 s):
 * tokens (while parsing), aliases, directives, depth and cost (graphql-armor), introspection at most once per
 * document, and at most `maxPaidFields` paid root fields per operation. Each refusal is a validation error with
 * its reason (400 on /graphql); nothing was executed or charged.
 */
export function useDocumentLimits(limits: GraphQLLimits): Plugin[] {
  // Report instead of throw, so the refusal is an ordinary validation error (armor prefixes "Syntax Error").
  const refusal = {
    propagateOnRejection: false,
    onReject: [
      (context: ValidationContext | null, error: GraphQLError) =>
        context?.reportError(new GraphQLError(error.message.replace(/^Syntax Error: /, ''))),
    ],
  };
  const rules: ValidationRule[] = [
    maxAliasesRule({ n: limits.maxAliases, ...refusal }),
    maxDirectivesRule({ n: limits.maxDirectives, ...refusal }),
    maxDepthRule({ n: limits.maxDepth, ignoreIntrospection: false, flattenFragments: true, ...refusal }),
    costLimitRule({ maxCost: limits.maxCost, ignoreIntrospection: false, flattenFragments: true, ...refusal }),
    IntrospectionOncePerDocument,
    paidFieldsRule(limits.maxPaidFields),
  ];
  return [
    // The parser stops at the limit: a huge document costs no more than a document at the limit.
    maxTokensPlugin({ n: limits.maxTokens }),
    {
      onValidate({ addValidationRule }) {
        for (const rule of rules) addValidationRule(rule);
      },
    },
  ];
}

const INTROSPECTION_FIELDS = new Set(['__schema', '__type']);

/** `__schema` / `__type` once per document: its answer is the size of the whole schema. */
function IntrospectionOncePerDocument(context: ValidationContext): ASTVisitor {
  let seen = 0;
  return {
    Field(node) {
      if (!INTROSPECTION_FIELDS.has(node.name.value)) return;
      seen += 1;
      if (seen === 2)
        context.reportError(
          new GraphQLError('Introspection (__schema, __type) may be asked once per document.', { nodes: node }),
        );
    },
  };
}

function paidFieldsRule(max: number): ValidationRule {
  return function PaidFieldsPerOperation(context: ValidationContext): ASTVisitor {
    return {
      OperationDefinition(operation) {
        const root = context.getSchema().getRootType(operation.operation);
        if (!root) return;
        const count = paidFields(context, root.name, operation.selectionSet, new Set());
        if (count > max)
          context.reportError(
            new GraphQLError(
              `An operation may run at most ${max} paid fields (chat, images, speech, jobs, search, ...); this one has ${count}.`,
              { nodes: operation },
            ),
          );
      },
    };
  };
}

/** The paid fields of a root selection set, through inline fragments and fragment spreads (each fragment once). */
function paidFields(context: ValidationContext, root: string, set: SelectionSetNode, spread: Set<string>): number {
  let count = 0;
  for (const selection of set.selections) {
    if (selection.kind === Kind.FIELD) {
      if (PAID_ROOT_FIELDS.has(`${root}.${selection.name.value}`)) count += 1;
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      count += paidFields(context, root, selection.selectionSet, spread);
    } else if (!spread.has(selection.name.value)) {
      spread.add(selection.name.value);
      const fragment = context.getFragment(selection.name.value);
      if (fragment) count += paidFields(context, root, fragment.selectionSet, spread);
    }
  }
  return count;
}
