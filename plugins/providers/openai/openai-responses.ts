import type { ResponsesAdapter } from '../../../core/spec/index.js';
import { nativeResponsesAdapter } from '../../shared/responses-native.js';

/** The built-in tools OpenAI runs itself in the Responses API. */
export const OPENAI_BUILT_IN_TOOLS = [
  'web_search',
  'web_search_preview',
  'web_search_preview_2025_03_11',
  'file_search',
  'code_interpreter',
  'image_generation',
  'computer_use_preview',
  'computer',
  'mcp',
  'local_shell',
  'shell',
  'apply_patch',
  'tool_search',
] as const;

/** OpenAI's Responses API (`POST /v1/responses`), natively: the client's body as received, the answer and events as OpenAI sends them. */
export const openAIResponses: ResponsesAdapter = nativeResponsesAdapter({ url: (target) => `${target.baseUrl}/responses`, builtInTools: OPENAI_BUILT_IN_TOOLS });
