import { errors, type ProviderRegistration } from '../../../core/spec/index.js';
import { mapStabilityError } from './stability-ai-error.js';
import { stabilityImageGenerate } from './stability-ai-images.js';

export interface StabilityAIParams {
  /** Default base URL (default `https://api.stability.ai/v2beta`); `x-gateway-custom-host` overrides it per request. */
  baseUrl?: string;
}

/** Stability AI: image generation (Stable Image Ultra, Core, Stable Diffusion 3.5) behind `POST /v1/images/generations`. */
export function stabilityAI(params: StabilityAIParams = {}): ProviderRegistration {
  return {
    manifest: {
      id: 'stability-ai',
      kind: 'provider',
      specificationVersion: 'v1',
      version: '1.0.0',
      description: 'Stability AI: image generation (POST /v1/images/generations → v2beta stable-image/generate/{ultra,core,sd3}, multipart), images answered as base64.',
      params: { type: 'object', additionalProperties: false, properties: { baseUrl: { type: 'string', pattern: '^https?://' } } },
    },
    params,
    create(dependencies) {
      const baseUrl = (params.baseUrl ?? 'https://api.stability.ai/v2beta').replace(/\/+$/, '');
      return {
        id: 'stability-ai',
        name: 'Stability AI',
        operations: { imageGenerate: stabilityImageGenerate(dependencies.clock) },
        baseUrl: () => baseUrl,
        auth(_request, target): Record<string, string> {
          if (!target.credentials.apiKey) throw errors.authentication('Stability AI needs "Authorization: Bearer <Stability API key>".', { code: 'missing_provider_credentials' });
          return { authorization: `Bearer ${target.credentials.apiKey}` };
        },
        authHeaders: ['authorization'],
        mapError: mapStabilityError,
      };
    },
  };
}
