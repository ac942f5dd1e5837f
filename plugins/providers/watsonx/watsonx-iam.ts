import { type Clock, type CredentialExchange, isRecord } from '../../../core/spec/index.js';

/** IBM Cloud's IAM token endpoint, where an API key is exchanged for an access token. */
export const IAM_TOKEN_URL = 'https://iam.cloud.ibm.com/identity/token';

/** The grant type of an API key exchange (IBM's IAM identity token API). */
export const IAM_APIKEY_GRANT = 'urn:ibm:params:oauth:grant-type:apikey';

/**
 * An IAM access token is a JWT (three base64url parts joined by dots); an IBM Cloud API key never
 * holds a dot. A credential shaped like a JWT is sent as it is; anything else is an API key, exchanged.
 */
export const isAccessToken = (credential: string): boolean => /^[\w-]+\.[\w-]+\.[\w-]+$/.test(credential);

/**
 * The API key exchange: a form-encoded `POST` of the grant type and the key to the IAM token
 * endpoint, whose answer carries `access_token`, `expires_in` (seconds) and `expiration` (epoch seconds).
 */
export function iamExchange(tokenUrl: string, clock?: Clock): CredentialExchange {
  return {
    applies: (target) => target.credentials.apiKey !== undefined && !isAccessToken(target.credentials.apiKey),
    toUpstream: (target) => ({
      method: 'POST',
      url: tokenUrl,
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams({ grant_type: IAM_APIKEY_GRANT, apikey: target.credentials.apiKey ?? '' }).toString(),
    }),
    fromUpstream(body) {
      if (!isRecord(body) || typeof body.access_token !== 'string') throw new TypeError('IAM answer without access_token');
      if (typeof body.expiration === 'number') return { token: body.access_token, expiresAt: body.expiration * 1000 };
      const now = clock ? clock.now() : Date.now();
      return typeof body.expires_in === 'number' ? { token: body.access_token, expiresAt: now + body.expires_in * 1000 } : { token: body.access_token };
    },
  };
}
