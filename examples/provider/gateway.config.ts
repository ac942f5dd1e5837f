import { defineConfig } from '../../config/index.js';
import { openai } from '../../plugins/providers/openai/index.js';
import { acme } from './index.js';

/** A configuration that registers the Acme plugin beside a shipped one. */
export default defineConfig({
  providers: [openai(), acme()],
});
