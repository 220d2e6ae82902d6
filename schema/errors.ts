import type { AppError } from '../src/errors.ts';
import {
  AdminKeyRequiredError,
  AuthenticationError,
  ForbiddenError,
  InsufficientBalanceError,
  InvalidModelError,
  NotFoundError,
  SpendLimitExceededError,
  UpstreamError,
  ValidationError,
} from '../src/errors.ts';
import { builder } from './builder.ts';

/** Every expected failure implements Error, so clients can always select `... on Error { message code }`. */
export const ErrorInterface = builder.interfaceRef<AppError>('Error').implement({
  description: 'An expected failure. `code` is the same code the REST API returns.',
  fields: (t) => ({
    message: t.exposeString('message'),
    code: t.string({ resolve: (error) => error.code }),
  }),
});

const IssueRef = builder.simpleObject('ValidationIssue', {
  fields: (t) => ({
    path: t.stringList({ description: 'Path of the offending field.' }),
    message: t.string(),
  }),
});

builder.objectType(ValidationError, {
  name: 'ValidationError',
  interfaces: [ErrorInterface],
  isTypeOf: (value) => value instanceof ValidationError,
  fields: (t) => ({
    issues: t.field({
      type: [IssueRef],
      resolve: (error) => error.issues.map((issue) => ({ path: issue.path.map(String), message: issue.message })),
    }),
  }),
});

const simpleErrors = [
  [NotFoundError, 'NotFoundError'],
  [InvalidModelError, 'InvalidModelError'],
  [AuthenticationError, 'AuthenticationError'],
  [AdminKeyRequiredError, 'AdminKeyRequiredError'],
  [ForbiddenError, 'ForbiddenError'],
  [InsufficientBalanceError, 'InsufficientBalanceError'],
  [SpendLimitExceededError, 'SpendLimitExceededError'],
  [UpstreamError, 'UpstreamError'],
] as const;

for (const [ErrorClass, name] of simpleErrors) {
  builder.objectType(ErrorClass, {
    name,
    interfaces: [ErrorInterface],
    isTypeOf: (value) => value instanceof ErrorClass,
    fields: () => ({}),
  });
}
