// The key of a machine client that authenticates with a signed JWT (private_key_jwt, RFC 7523): a PKCS#8 PEM or a
// private JWK, imported once.
import { importJWK, importPKCS8, type JWK } from 'jose';
import type * as oauth from 'oauth4webapi';
import type { ClientCredentialsOptions } from './types.js';
import { OAuthFlowError } from './types.js';

/** The signing key of `options` (algorithm ES256 unless given). */
export async function importClientKey(options: ClientCredentialsOptions): Promise<oauth.PrivateKey> {
  const alg = options.algorithm ?? 'ES256';
  const source = options.privateKey;
  if (source === undefined) throw new OAuthFlowError('private_key_jwt needs a private key');
  let key: unknown;
  try {
    key =
      typeof source === 'string'
        ? await importPKCS8(source, alg, { extractable: false })
        : await importJWK(source as JWK, alg);
  } catch {
    throw new OAuthFlowError(`the client's private key could not be imported for ${alg}`);
  }
  if (typeof key !== 'object' || key === null || (key as { type?: unknown }).type !== 'private')
    throw new OAuthFlowError(`the client's private key is not an asymmetric ${alg} private key`);
  const cryptoKey = key as unknown as oauth.PrivateKey['key'];
  return options.keyId === undefined ? { key: cryptoKey } : { key: cryptoKey, kid: options.keyId };
}
