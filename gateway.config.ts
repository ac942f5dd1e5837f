import { defineConfig } from './config/index.js';
import { builtinGuardrails, pii } from './plugins/guardrails/index.js';
import { openai } from './plugins/providers/openai/index.js';

/**
 * The shipped configuration. Every provider and guardrail is registered here explicitly; copy this
 * file's shape to build your own (or keep yours outside the repository: GATEWAY_CONFIG=<path>).
 */
export default defineConfig({
  providers: [openai()],
  // Listed at GET /admin/plugins (with their params schemas) whether or not a policy uses them.
  guardrails: [...builtinGuardrails],
  policies: {
    // Redacts PII in the request before it leaves and in the answer (streams included) before it
    // reaches the client.
    'pii-redact': {
      description: 'Redacts PII in input and output, streams included.',
      input: [pii({ action: 'redact' })],
      output: [pii({ action: 'redact' })],
    },
    // Refuses requests containing PII; cuts an answer (or a stream) before PII would reach the client.
    'pii-block': {
      description: 'Denies input containing PII and cuts output containing PII.',
      input: [pii({ action: 'deny' })],
      output: [pii({ action: 'deny' })],
    },
  },
});
