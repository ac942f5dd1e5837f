// A configuration using the example guardrail next to built-in ones. Run it with
//   npm run build && GATEWAY_CONFIG=dist/examples/guardrail/gateway.config.js npm start
// or keep a copy in your own project importing 'llm-gateway', 'llm-gateway/guardrails' and
// 'llm-gateway/providers/openai' (see docs/guardrails.md).
import { defineConfig } from '../../config/index.js';
import { pii, step } from '../../plugins/guardrails/index.js';
import { openai } from '../../plugins/providers/openai/index.js';
import { internalHosts } from './internal-hosts.js';

export default defineConfig({
  providers: [openai()],
  policies: {
    'no-internal-hosts': {
      input: [internalHosts({ domains: ['corp.internal'] }), pii({})],
      output: [step(internalHosts({ domains: ['corp.internal'], action: 'redact' }), { timeoutMs: 50 })],
    },
  },
  defaultPolicy: 'no-internal-hosts',
});
