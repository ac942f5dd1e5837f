import type { GeminiContent, GeminiRequest } from '../../../spec/gemini.js';
import { isRecord } from '../../../spec/is-record.js';
import type { MessagesBlock, MessagesCountRequest } from '../../../spec/messages.js';
import { estimateInputTokens } from '../messages/count-tokens.js';

/** A part as the Messages block the gateway's estimator reads (same tokenizer, same allowances for images and PDFs). */
function blockOf(part: Record<string, unknown>): MessagesBlock | undefined {
  if (typeof part.text === 'string') return { type: 'text', text: part.text };
  if (isRecord(part.inlineData)) {
    const mime = String(part.inlineData.mimeType ?? '');
    const source = { type: 'base64', media_type: mime, data: String(part.inlineData.data ?? '') };
    return mime === 'application/pdf' ? { type: 'document', source } : { type: 'image', source };
  }
  if (isRecord(part.fileData)) return { type: 'image', source: { type: 'url', url: String(part.fileData.fileUri ?? '') } };
  if (isRecord(part.functionCall)) return { type: 'tool_use', id: '', name: String(part.functionCall.name ?? ''), input: part.functionCall.args ?? {} };
  if (isRecord(part.functionResponse)) return { type: 'tool_result', tool_use_id: '', content: JSON.stringify(part.functionResponse.response ?? {}) };
  return undefined;
}

const blocksOf = (content: GeminiContent): MessagesBlock[] => content.parts.flatMap((part) => blockOf(part) ?? []);

/**
 * The estimate `:countTokens` answers on a provider without a native counter (docs/protocols.md):
 * the request read as the Messages estimator reads its own (o200k_base text tokens, fixed allowances
 * for images, PDF pages, messages and tools). Never a completion: nothing goes upstream.
 */
export async function estimateGeminiTokens(request: GeminiRequest): Promise<number> {
  const system = request.systemInstruction;
  const tools = (request.tools ?? []).flatMap((tool) =>
    Array.isArray(tool.functionDeclarations)
      ? (tool.functionDeclarations as Array<Record<string, unknown>>).map((declaration) => ({
          name: declaration.name,
          description: declaration.description,
          input_schema: declaration.parametersJsonSchema ?? declaration.parameters,
        }))
      : [],
  );
  const count: MessagesCountRequest = {
    model: request.model,
    messages: request.contents.map((content) => ({ role: content.role === 'model' ? 'assistant' : 'user', content: blocksOf(content) })),
    ...(system === undefined ? {} : { system: typeof system === 'string' ? system : blocksOf(system) }),
    ...(tools.length > 0 ? { tools } : {}),
  } as MessagesCountRequest;
  return estimateInputTokens(count);
}
