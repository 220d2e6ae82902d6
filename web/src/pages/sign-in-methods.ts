/*
 * Other ways to sign in, shown under the key form (e.g. a wallet's SIGN-IN-WITH-X flow). Each is a component
 * that, once its flow succeeds, calls signIn({ bearer, kind, label }) from web/src/lib/auth.ts: the rest of the
 * console only sees "a bearer credential".
 */
import type { ComponentType } from 'preact';
import { WalletSignIn } from './WalletSignIn.tsx';

export const SIGN_IN_METHODS: readonly ComponentType[] = [WalletSignIn];
