#!/usr/bin/env node
// `npx lagoon …`: the operator CLI, run through tsx (Lagoon ships TypeScript sources).
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
