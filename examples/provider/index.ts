import type { ProviderRegistration } from '../../core/spec/index.js';
import { acmeChat } from './acme-chat.js';
import { mapAcmeError } from './acme-error.js';

export interface AcmeParams {
  /** Default `https://api.acme.example`; `x-gateway-custom-host` overrides it per request. */
  baseUrl?: string;
}

/** The Acme provider: chat, plain and streamed, with tools. Its key travels as `X-Acme-Key`. */
export function acme(params: AcmeParams = {}): ProviderRegistration {
  return {
    manifest: {
      id: 'acme',
      kind: 'provider',
      specificationVersion: 'v1',
      version: '0.1.0',
      description: 'Acme LLM (a worked example): chat with tools, plain and streamed.',
      params: { type: 'object', additionalProperties: false, properties: { baseUrl: { type: 'string', pattern: '^https?://' } } },
    },
    params,
    create() {
      const baseUrl = (params.baseUrl ?? 'https://api.acme.example').replace(/\/+$/, '');
      return {
        id: 'acme',
        name: 'Acme LLM',
        operations: { chat: acmeChat },
        capabilities: { developerRole: () => false },
        baseUrl: () => baseUrl,
        auth(_request, target): Record<string, string> {
          return target.credentials.apiKey ? { 'x-acme-key': target.credentials.apiKey } : {};
        },
        authHeaders: ['x-acme-key'],
        mapError: mapAcmeError,
      };
    },
  };
}
