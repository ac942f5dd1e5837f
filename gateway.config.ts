import { defineConfig } from './config/index.js';
import { azureOpenAI } from './plugins/providers/azure-openai/index.js';
import { bedrock } from './plugins/providers/bedrock/index.js';
import { cohere } from './plugins/providers/cohere/index.js';
import { openai } from './plugins/providers/openai/index.js';

/**
 * The shipped configuration. Every provider and guardrail is registered here explicitly; copy this
 * file's shape to build your own.
 */
export default defineConfig({
  providers: [openai(), azureOpenAI(), bedrock(), cohere()],
});
