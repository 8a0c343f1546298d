// `serve --public-url`: where clients and webhook senders reach the server (the base of ctx.callbackUrl's URLs).
import { checkedPublicUrl } from '../runtime.js';
import { UsageError } from './args.js';

/** --public-url, checked (an http(s) URL without query or fragment); undefined when not given. */
export function publicUrlFlag(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  try {
    return checkedPublicUrl(value);
  } catch (err) {
    throw new UsageError(`--public-url: ${(err as Error).message.replace(/^publicUrl: /, '')}`);
  }
}

/** The host name of the public URL (none without one): it reaches the server, so Host and Origin accept it. */
export const publicHosts = (publicUrl: string | undefined): string[] =>
  publicUrl === undefined ? [] : [new URL(publicUrl).hostname];
