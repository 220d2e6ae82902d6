import { GraphQLError, type ASTVisitor, type ValidationContext } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { GraphQLLimits } from '../src/config.ts';
import type { Operations } from '../src/services.ts';

/**
 * LAGOON_GRAPHQL_INTROSPECTION: `on` answers `__schema` / `__type` to anyone, `off` to no one, `authenticated`
 * only to a caller with a valid API key (a wallet sign-in costs nothing to make, so it does not count). Refused
 * introspection is a validation error; `__typename` is always allowed. Validation runs before the request's
 * context exists, so the key is checked in `onRequest` (cached like every key lookup) and remembered per request.
 */
export function useIntrospectionPolicy(deps: {
  mode: GraphQLLimits['introspection'];
  services: Operations;
}): Plugin<Record<string, never>, { requestId?: string }> {
  if (deps.mode === 'on') return {};
  const keyed = new WeakSet<Request>();
  return {
    async onRequest({ request, serverContext }) {
      if (deps.mode !== 'authenticated' || !request.headers.has('authorization')) return;
      try {
        const auth = await deps.services.auth.authenticate(
          request.headers,
          serverContext.requestId ?? 'introspection',
          true,
        );
        if (auth.kind === 'apiKey' || auth.kind === 'operator') keyed.add(request);
      } catch {
        // A bad key is answered 401 by the context factory; here it only means "no key".
      }
    },
    onValidate({ context, addValidationRule }) {
      // A WebSocket's operations were authenticated at its connection (schema/graphql-ws.ts).
      const { request, apiKeyCaller } = context as { request?: Request; apiKeyCaller?: boolean };
      if (deps.mode === 'off') addValidationRule(IntrospectionOff);
      else if (apiKeyCaller !== true && (!request || !keyed.has(request))) addValidationRule(IntrospectionNeedsAKey);
    },
  };
}

// Named rules: Yoga caches validation results by the names of the rules that ran.
function IntrospectionOff(context: ValidationContext): ASTVisitor {
  return refuseIntrospection(context, 'Introspection is turned off on this server.');
}

function IntrospectionNeedsAKey(context: ValidationContext): ASTVisitor {
  return refuseIntrospection(
    context,
    'Introspection needs an API key on this server: send Authorization: Bearer <key>.',
  );
}

function refuseIntrospection(context: ValidationContext, message: string): ASTVisitor {
  return {
    Field(node) {
      if (node.name.value === '__schema' || node.name.value === '__type')
        context.reportError(new GraphQLError(message, { nodes: node }));
    },
  };
}
