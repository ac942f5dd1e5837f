import type { ProviderRegistration } from '../../core/spec/provider/index.js';
import { lumenChat } from './lumen-chat.js';
import { mapLumenError } from './lumen-error.js';

export interface LumenParams {
  /** Default `https://api.lumen.example`; `x-gateway-custom-host` overrides it per request. */
  baseUrl?: string;
}

/** The Lumen provider: chat with tools, plain and streamed as newline-delimited JSON. Its key travels as `Authorization: Key <key>`. */
export function lumen(params: LumenParams = {}): ProviderRegistration {
  return {
    manifest: {
      id: 'lumen',
      kind: 'provider',
      specificationVersion: 'v1',
      version: '0.1.0',
      description: 'Lumen (a worked example): chat with tools, streamed as newline-delimited JSON.',
      params: { type: 'object', additionalProperties: false, properties: { baseUrl: { type: 'string', pattern: '^https?://' } } },
    },
    params,
    create({ clock }) {
      const baseUrl = (params.baseUrl ?? 'https://api.lumen.example').replace(/\/+$/, '');
      return {
        id: 'lumen',
        name: 'Lumen',
        operations: { chat: lumenChat(clock) },
        capabilities: { developerRole: () => false },
        baseUrl: () => baseUrl,
        auth(_request, target): Record<string, string> {
          return target.credentials.apiKey ? { authorization: `Key ${target.credentials.apiKey}` } : {};
        },
        authHeaders: ['authorization'],
        mapError: mapLumenError,
      };
    },
  };
}
