import type { ConformanceSubject } from '../../../core/spec/index.js';
import { aiGatewayFake, FAKE_ACCOUNT, FAKE_GATEWAY } from './cloudflare-ai-gateway-fake.js';
import { cloudflareAIGateway } from './index.js';

/** Cloudflare AI Gateway under the conformance kit: the plugin against a fake of a gateway's compat endpoint. */
export const cloudflareAIGatewayConformance: ConformanceSubject = {
  registration: cloudflareAIGateway(),
  fake: aiGatewayFake(),
  model: 'openai/gpt-4o-mini',
  headers: { 'x-gateway-cloudflare-account-id': FAKE_ACCOUNT, 'x-gateway-cloudflare-gateway-id': FAKE_GATEWAY },
  developerRole: false,
};

export default cloudflareAIGatewayConformance;
