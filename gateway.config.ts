import { defineConfig } from './config/index.js';
import { anthropic } from './plugins/providers/anthropic/index.js';
import { gemini } from './plugins/providers/gemini/index.js';
import { openai } from './plugins/providers/openai/index.js';
import { vertexAI } from './plugins/providers/vertex-ai/index.js';

/**
 * The shipped configuration. Every provider and guardrail is registered here explicitly; copy this
 * file's shape to build your own.
 */
export default defineConfig({
  providers: [openai(), anthropic(), gemini(), vertexAI()],
});
