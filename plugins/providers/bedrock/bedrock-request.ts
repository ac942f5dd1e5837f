import { type ChatMessage, type ChatRequest, errors } from '../../../core/spec/index.js';
import { documentBlock, documentNamer } from './bedrock-document.js';
import {
  claudeThinking,
  contentParts,
  contentText,
  functionTools,
  hasToolTurns,
  parseDataUrl,
  requireSingleChoice,
  stopList,
  thinkingBlocksOf,
  toolChoiceOf,
  toolInput,
} from '../../shared/chat-mapping.js';

/** Bedrock Converse content blocks the gateway writes or reads. */
export type BedrockBlock =
  | { text: string }
  | { image: { format: string; source: { bytes: string } } }
  | { document: { format: string; name: string; source: { bytes: string } } }
  | { toolUse: { toolUseId: string; name: string; input: unknown } }
  | { toolResult: { toolUseId: string; content: Array<{ text: string } | { image: unknown }>; status?: 'success' | 'error' } }
  | { reasoningContent: { reasoningText?: { text: string; signature?: string }; redactedContent?: string } };

interface BedrockMessage {
  role: 'user' | 'assistant';
  content: BedrockBlock[];
}

const IMAGE_FORMATS: Record<string, string> = { 'image/png': 'png', 'image/jpeg': 'jpeg', 'image/jpg': 'jpeg', 'image/gif': 'gif', 'image/webp': 'webp' };

/** `/model/{id}/{action}`, the model id percent-encoded (ids contain `:`). */
export const modelPath = (baseUrl: string, model: string, action: string): string => `${baseUrl}/model/${encodeURIComponent(model)}/${action}`;

function imageBlock(url: string, param: string): BedrockBlock {
  const data = parseDataUrl(url);
  if (!data) throw errors.invalidRequest('Bedrock accepts images as base64 data URLs (data:image/png;base64,...), not remote URLs.', { param, code: 'unsupported_parameter' });
  const format = IMAGE_FORMATS[data.mediaType];
  if (!format) throw errors.invalidRequest(`Bedrock accepts png, jpeg, gif and webp images, not ${data.mediaType}.`, { param, code: 'unsupported_parameter' });
  return { image: { format, source: { bytes: data.data } } };
}

function userBlocks(message: ChatMessage, param: string, documentName: (filename: string | undefined) => string): BedrockBlock[] {
  return contentParts(message.content, param)
    .map((part, index): BedrockBlock | undefined => {
      if (part.type === 'text') return part.text === '' ? undefined : { text: part.text };
      if (part.type === 'file') return documentBlock(part.file, documentName(part.file.filename), `${param}[${index}]`);
      return imageBlock(part.url, `${param}[${index}].image_url.url`);
    })
    .filter((block): block is BedrockBlock => block !== undefined);
}

/**
 * The reasoning a client sends back (`content_blocks` of an earlier answer) opens the assistant turn:
 * Claude on Bedrock refuses a thinking turn with tool use whose signed reasoning is missing.
 */
function reasoningBlocks(message: ChatMessage): BedrockBlock[] {
  return thinkingBlocksOf(message).map((block): BedrockBlock =>
    block.type === 'thinking'
      ? { reasoningContent: { reasoningText: block.signature ? { text: block.text, signature: block.signature } : { text: block.text } } }
      : { reasoningContent: { redactedContent: block.data } },
  );
}

function assistantBlocks(message: ChatMessage, index: number): BedrockBlock[] {
  const blocks: BedrockBlock[] = reasoningBlocks(message);
  const text = contentText(message.content, `messages[${index}].content`);
  if (text.trim() !== '') blocks.push({ text });
  for (const call of message.tool_calls ?? []) {
    blocks.push({
      toolUse: {
        toolUseId: call.id,
        name: call.function.name,
        input: toolInput(call.function.arguments),
      },
    });
  }
  return blocks;
}

/** System text, and the turns with consecutive same-role turns merged (Converse wants them alternating). */
function convertMessages(messages: readonly ChatMessage[]): { system: Array<{ text: string }>; messages: BedrockMessage[] } {
  const system: Array<{ text: string }> = [];
  const out: BedrockMessage[] = [];
  const documentName = documentNamer();
  const push = (role: BedrockMessage['role'], content: BedrockBlock[]) => {
    if (content.length === 0) return;
    const last = out.at(-1);
    if (last && last.role === role) last.content.push(...content);
    else out.push({ role, content });
  };
  messages.forEach((message, index) => {
    const param = `messages[${index}].content`;
    switch (message.role) {
      case 'system':
      case 'developer': {
        const text = contentText(message.content, param);
        if (text) system.push({ text });
        break;
      }
      case 'user':
        push('user', userBlocks(message, param, documentName));
        break;
      case 'assistant':
        push('assistant', assistantBlocks(message, index));
        break;
      case 'tool': {
        if (!message.tool_call_id) throw errors.invalidRequest('A tool message needs tool_call_id.', { param: `messages[${index}].tool_call_id`, code: 'missing_required_parameter' });
        const content = contentParts(message.content, param).map((part, partIndex) => {
          if (part.type === 'text') return { text: part.text };
          if (part.type === 'image') return { image: (imageBlock(part.url, `${param}[${partIndex}].image_url.url`) as { image: unknown }).image };
          throw errors.invalidRequest(`Invalid '${param}[${partIndex}]': a tool result carries text and images only.`, { param: `${param}[${partIndex}]`, code: 'unsupported_content_part' });
        });
        push('user', [{ toolResult: { toolUseId: message.tool_call_id, content: content.length ? content : [{ text: '' }] } }]);
        break;
      }
      default:
        throw errors.invalidRequest(`The role "${message.role}" is not supported by Bedrock; use tools and tool messages.`, { param: `messages[${index}].role`, code: 'unsupported_parameter' });
    }
  });
  return { system, messages: out };
}

function toolConfig(request: ChatRequest): Record<string, unknown> | undefined {
  const tools = functionTools(request.tools).map((tool) => ({
    toolSpec: { name: tool.name, ...(tool.description ? { description: tool.description } : {}), inputSchema: { json: tool.parameters } },
  }));
  if (tools.length === 0) return undefined;
  const choice = toolChoiceOf(request.tool_choice);
  // Converse has no "none": the tools are left out, unless the history holds tool turns, which need them declared.
  if (choice?.kind === 'none') return hasToolTurns(request.messages) ? { tools } : undefined;
  if (choice?.kind === 'required') return { tools, toolChoice: { any: {} } };
  if (choice?.kind === 'named') return { tools, toolChoice: { tool: { name: choice.name } } };
  return { tools, toolChoice: { auto: {} } };
}

/** The Converse request body for a unified chat request. */
export function toConverseBody(request: ChatRequest): Record<string, unknown> {
  requireSingleChoice(request.n, 'bedrock');
  const format = (request.response_format as { type?: string } | undefined)?.type;
  if (format === 'json_schema') throw errors.invalidRequest('Bedrock Converse does not enforce a JSON schema; use a tool with that schema instead.', { param: 'response_format', code: 'unsupported_parameter' });
  const { system, messages } = convertMessages(request.messages);
  const body: Record<string, unknown> = { messages };
  if (system.length) body.system = system;
  const inferenceConfig: Record<string, unknown> = {};
  const maxTokens = request.max_completion_tokens ?? request.max_tokens;
  if (typeof maxTokens === 'number') inferenceConfig.maxTokens = maxTokens;
  if (typeof request.temperature === 'number') inferenceConfig.temperature = request.temperature;
  if (typeof request.top_p === 'number') inferenceConfig.topP = request.top_p;
  const stops = stopList(request.stop);
  if (stops) inferenceConfig.stopSequences = stops;
  if (Object.keys(inferenceConfig).length) body.inferenceConfig = inferenceConfig;
  const tools = toolConfig(request);
  if (tools) body.toolConfig = tools;
  // Anthropic models on Bedrock read extended thinking from the model-specific fields; `reasoning_effort`
  // becomes a budget only for them (other models refuse fields they do not know).
  const thinking = request.thinking !== undefined || /claude/i.test(request.model) ? claudeThinking(request, 1024) : undefined;
  if (thinking?.type === 'enabled') body.additionalModelRequestFields = { thinking };
  return body;
}
