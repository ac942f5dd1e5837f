/**
 * The JSON Web Signature algorithms the gateway accepts on tokens it verifies (JWT callers, ID tokens):
 * asymmetric only. With keys taken from a published key set, an HMAC would be keyed by something
 * everyone has (the public key), and `none` is no signature at all.
 */
export const ASYMMETRIC_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'] as const;
