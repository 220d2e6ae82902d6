/*
 * The EIP-4361 message of a wallet sign-in, written out here so the console needs no Ethereum library: the
 * server parses it (src/wallets/siwx-message.ts) and checks the signature against the address it names.
 */

export interface SiweFields {
  readonly domain: string;
  readonly address: string;
  readonly statement: string;
  readonly uri: string;
  readonly version: string;
  readonly chainId: number;
  readonly nonce: string;
  readonly issuedAt: string;
  readonly expirationTime: string;
}

export function siweMessage(fields: SiweFields): string {
  return [
    `${fields.domain} wants you to sign in with your Ethereum account:`,
    fields.address,
    '',
    fields.statement,
    '',
    `URI: ${fields.uri}`,
    `Version: ${fields.version}`,
    `Chain ID: ${fields.chainId}`,
    `Nonce: ${fields.nonce}`,
    `Issued At: ${fields.issuedAt}`,
    `Expiration Time: ${fields.expirationTime}`,
  ].join('\n');
}

/** UTF-8 text as 0x hex, the form personal_sign takes. */
export function utf8Hex(text: string): string {
  let hex = '0x';
  for (const byte of new TextEncoder().encode(text)) hex += byte.toString(16).padStart(2, '0');
  return hex;
}

/** The SIGN-IN-WITH-X header value: base64 of the JSON payload (docs/api.md, "Wallet callers"). */
export function signInHeader(address: string, message: string, signature: string, chainId: number): string {
  const json = JSON.stringify({ address, message, signature, timestamp: Date.now(), chainId });
  let binary = '';
  for (const byte of new TextEncoder().encode(json)) binary += String.fromCharCode(byte);
  return btoa(binary);
}
