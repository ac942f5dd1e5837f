import type { ChatAdapter, ChatCompletionChunk, ChatStreamMapper, ProviderTarget } from '../../../core/spec/index.js';
import { openAIChat } from '../openai/openai-chat.js';
import { createOpenAIStreamMapper } from '../openai/openai-stream.js';
import { applyContentFilter } from './azure-content-filter.js';
import { AZURE_HEADERS, deploymentUrl } from './azure-target.js';

/** Azure names the model it ran; the model-name header fills the field when Azure leaves it empty. */
const reportedModel = (model: unknown, target: ProviderTarget, requested: string): string =>
  typeof model === 'string' && model ? model : (target.headers[AZURE_HEADERS.modelName] ?? requested);

function createAzureStreamMapper(target: ProviderTarget, requested: string): ChatStreamMapper {
  const inner = createOpenAIStreamMapper();
  return {
    map(event) {
      const step = inner.map(event);
      if (!step.chunks) return step;
      // Azure's first chunk carries only `prompt_filter_results` (no choices, no usage): nothing for the client.
      const chunks = step.chunks
        .filter((chunk) => chunk.choices.length > 0 || chunk.usage)
        .map((chunk): ChatCompletionChunk => applyContentFilter({ ...chunk, model: reportedModel(chunk.model, target, requested) }));
      return { ...step, chunks };
    },
  };
}

/** Chat completions on a deployment: OpenAI's body unchanged, Azure's URL, content-filter finish reasons. */
export function azureChat(defaultApiVersion: string): ChatAdapter {
  return {
    toUpstream(request, target, original) {
      return { ...openAIChat.toUpstream(request, target, original), url: deploymentUrl(target, 'chat/completions', defaultApiVersion) };
    },
    fromUpstream(body, request, target) {
      const response = openAIChat.fromUpstream(body, request, target);
      return applyContentFilter({ ...response, model: reportedModel(response.model, target, request.model) });
    },
    stream: { createMapper: (request, target) => createAzureStreamMapper(target, request.model) },
  };
}
