// The chat view's model of a logged request: the stored request and response bodies read into
// turns (a role and its parts) in the shape of the API the client called. Pure functions, no DOM:
// detail.js draws the result, and the unit test runs this module in Node.

/**
 * A turn: `{ role, parts }`. A part is one of
 * `{ type: 'text', text }`, `{ type: 'reasoning', text }`, `{ type: 'tool_call', name, id, arguments }`,
 * `{ type: 'tool_result', id, text, error }`, `{ type: 'image', src }` (a data: URL the page may show),
 * `{ type: 'link', label, url }` (an external resource, not loaded), `{ type: 'chip', kind, label }`
 * (a file, audio, a document, an item the view does not draw), `{ type: 'vectors', count, dimensions }`.
 */

/** The image types an `<img>` may show from a data: URL (SVG left out: it is a document). */
const IMAGE_DATA_URL = /^data:image\/(?:png|jpeg|jpg|gif|webp|avif|bmp);base64,[A-Za-z0-9+/=\s]+$/i;

/** Which API's shape the log entry is in, from its operation, else its path. */
export function shapeOf(record) {
  const operation = record?.operation;
  const known = { chat: 'chat', completion: 'completion', embed: 'embed', imageGenerate: 'image', imageEdit: 'image', imageVariation: 'image', messages: 'messages', responses: 'responses' };
  if (known[operation]) return known[operation];
  const path = String(record?.path ?? '');
  if (/\/chat\/completions$/.test(path)) return 'chat';
  if (/\/responses$/.test(path)) return 'responses';
  if (/\/messages$/.test(path)) return 'messages';
  if (/\/completions$/.test(path)) return 'completion';
  if (/\/embeddings$/.test(path)) return 'embed';
  if (/\/images\//.test(path)) return 'image';
  return undefined;
}

/** JSON text parsed, or undefined (a truncated or non-JSON body). */
export function parseJson(text) {
  if (typeof text !== 'string' || text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The JSON payloads of an SSE text's `data:` lines, in order; undefined when it is not SSE. */
export function sseEvents(text) {
  if (typeof text !== 'string' || !/^(?:data|event|id|:)[^\n]*/m.test(text)) return undefined;
  const events = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    const data = block.split(/\r?\n/).filter((line) => line.startsWith('data:')).map((line) => line.slice(5).replace(/^ /, '')).join('\n');
    if (!data || data === '[DONE]') continue;
    const value = parseJson(data);
    if (value !== undefined) events.push(value);
  }
  return events.length ? events : undefined;
}

const text = (value) => ({ type: 'text', text: String(value) });
const isObject = (value) => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Tool arguments pretty-printed when they are JSON (a string, as chat and Responses send them, or an object, as Messages does). */
export function prettyArguments(value) {
  if (value === undefined || value === null) return '';
  if (typeof value !== 'string') return JSON.stringify(value, null, 2);
  const parsed = parseJson(value);
  return parsed === undefined ? value : JSON.stringify(parsed, null, 2);
}

/** An image by URL: a data: image becomes a thumbnail; anything else a link (the page's CSP loads no external image). */
export function imagePart(url, label = 'image') {
  const value = String(url ?? '');
  if (IMAGE_DATA_URL.test(value)) return { type: 'image', src: value.replace(/\s+/g, '') };
  if (value.startsWith('data:')) return { type: 'chip', kind: 'image', label: `${label} (${value.slice(5, value.indexOf(';') > 0 ? value.indexOf(';') : 30)})` };
  if (/^https?:\/\//i.test(value)) return { type: 'link', label, url: value };
  return { type: 'chip', kind: 'image', label: value ? `${label}: ${value.slice(0, 80)}` : label };
}

const fileLabel = (file) => [file?.filename, file?.file_id, file?.file_url].filter(Boolean).join(' · ') || (file?.file_data ? 'inline data' : 'file');

/** One content part of a chat message (`text`, `image_url`, `input_audio`, `file`, `refusal`). */
function chatPart(part) {
  if (typeof part === 'string') return text(part);
  if (!isObject(part)) return { type: 'chip', kind: 'part', label: JSON.stringify(part) };
  switch (part.type) {
    case 'text':
      return text(part.text ?? '');
    case 'image_url':
      return imagePart(typeof part.image_url === 'string' ? part.image_url : part.image_url?.url);
    case 'input_audio':
      return { type: 'chip', kind: 'audio', label: `audio${part.input_audio?.format ? ` (${part.input_audio.format})` : ''}` };
    case 'file':
      return { type: 'chip', kind: 'file', label: fileLabel(part.file) };
    case 'refusal':
      return { type: 'text', text: part.refusal ?? '', refusal: true };
    default:
      return { type: 'chip', kind: part.type ?? 'part', label: part.type ?? 'part' };
  }
}

const contentParts = (content, partOf) => (content === undefined || content === null ? [] : Array.isArray(content) ? content.map(partOf) : [typeof content === 'string' ? text(content) : partOf(content)]);

/** A chat message (request or answer) as a turn. */
function chatTurn(message) {
  if (!isObject(message)) return { role: 'unknown', parts: [text(JSON.stringify(message))] };
  const parts = [];
  if (typeof message.reasoning_content === 'string' && message.reasoning_content) parts.push({ type: 'reasoning', text: message.reasoning_content });
  if (message.role === 'tool') parts.push({ type: 'tool_result', id: message.tool_call_id, text: prettyArguments(flatText(message.content)) });
  else if (message.role === 'function') parts.push({ type: 'tool_result', id: message.name, text: prettyArguments(flatText(message.content)) });
  else parts.push(...contentParts(message.content, chatPart));
  if (typeof message.refusal === 'string' && message.refusal) parts.push({ type: 'text', text: message.refusal, refusal: true });
  for (const call of Array.isArray(message.tool_calls) ? message.tool_calls : []) {
    parts.push({ type: 'tool_call', name: call?.function?.name ?? call?.type ?? 'tool', id: call?.id, arguments: prettyArguments(call?.function?.arguments ?? call?.custom?.input) });
  }
  if (isObject(message.function_call)) parts.push({ type: 'tool_call', name: message.function_call.name, arguments: prettyArguments(message.function_call.arguments) });
  if (isObject(message.audio)) parts.push({ type: 'chip', kind: 'audio', label: message.audio.transcript ? `audio: “${message.audio.transcript}”` : 'audio' });
  return { role: message.role ?? 'assistant', name: message.name, parts };
}

/** Text of a content value (a string, or parts with text), for tool results. */
function flatText(content) {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((part) => (typeof part === 'string' ? part : part?.text ?? (part?.type ? `[${part.type}]` : ''))).join('\n');
  return content === undefined || content === null ? '' : JSON.stringify(content);
}

/**
 * A chat answer: the completion's choices, the log writer's assembled stream summary
 * (`{ stream: true, content, finish_reason }`), or raw SSE text assembled here.
 */
function chatAnswer(body, raw) {
  if (isObject(body) && Array.isArray(body.choices)) {
    return body.choices.map((choice) => ({ ...chatTurn(choice.message ?? { role: 'assistant', content: choice.text }), finish: choice.finish_reason }));
  }
  const events = sseEvents(raw);
  if (events) return assembleChatStream(events);
  return undefined;
}

/** Chat chunks (`choices[].delta`) assembled into one turn per choice: content, reasoning and tool calls. */
export function assembleChatStream(events) {
  const choices = [];
  for (const chunk of events) {
    for (const choice of Array.isArray(chunk?.choices) ? chunk.choices : []) {
      const index = typeof choice.index === 'number' ? choice.index : 0;
      const state = (choices[index] ??= { content: '', reasoning: '', calls: [], finish: undefined });
      const delta = choice.delta ?? {};
      if (typeof delta.content === 'string') state.content += delta.content;
      if (typeof choice.text === 'string') state.content += choice.text;
      if (typeof delta.reasoning_content === 'string') state.reasoning += delta.reasoning_content;
      for (const call of Array.isArray(delta.tool_calls) ? delta.tool_calls : []) {
        const at = typeof call.index === 'number' ? call.index : state.calls.length;
        const target = (state.calls[at] ??= { id: undefined, name: '', arguments: '' });
        if (call.id) target.id = call.id;
        if (call.function?.name) target.name += call.function.name;
        if (typeof call.function?.arguments === 'string') target.arguments += call.function.arguments;
      }
      if (choice.finish_reason) state.finish = choice.finish_reason;
    }
  }
  return choices.filter(Boolean).map((state) => ({
    role: 'assistant',
    streamed: true,
    finish: state.finish,
    parts: [
      ...(state.reasoning ? [{ type: 'reasoning', text: state.reasoning }] : []),
      ...(state.content || state.calls.length === 0 ? [text(state.content)] : []),
      ...state.calls.filter(Boolean).map((call) => ({ type: 'tool_call', name: call.name, id: call.id, arguments: prettyArguments(call.arguments) })),
    ],
  }));
}

// ---- Responses API ----

/** One content part of a Responses message (`input_text`, `output_text`, `input_image`, `input_file`, `refusal`…). */
function responsesPart(part) {
  if (typeof part === 'string') return text(part);
  if (!isObject(part)) return { type: 'chip', kind: 'part', label: JSON.stringify(part) };
  switch (part.type) {
    case 'input_text':
    case 'output_text':
    case 'text':
    case 'summary_text':
    case 'reasoning_text':
      return text(part.text ?? '');
    case 'refusal':
      return { type: 'text', text: part.refusal ?? '', refusal: true };
    case 'input_image':
      return part.image_url ? imagePart(part.image_url) : { type: 'chip', kind: 'image', label: part.file_id ? `image ${part.file_id}` : 'image' };
    case 'input_file':
      return { type: 'chip', kind: 'file', label: fileLabel(part) };
    case 'input_audio':
      return { type: 'chip', kind: 'audio', label: `audio${part.input_audio?.format ? ` (${part.input_audio.format})` : ''}` };
    default:
      return { type: 'chip', kind: part.type ?? 'part', label: part.type ?? 'part' };
  }
}

const summaryText = (item) => [...(Array.isArray(item.summary) ? item.summary : []), ...(Array.isArray(item.content) ? item.content : [])].map((part) => part?.text ?? '').filter(Boolean).join('\n\n');

/** One Responses item (input or output) as a turn: a message, reasoning, a function call or its output, or another item as a chip. */
export function responsesItem(item, defaultRole = 'user') {
  if (typeof item === 'string') return { role: defaultRole, parts: [text(item)] };
  if (!isObject(item)) return { role: 'unknown', parts: [text(JSON.stringify(item))] };
  const type = item.type ?? (item.role ? 'message' : undefined);
  switch (type) {
    case 'message':
      return { role: item.role ?? defaultRole, item: 'message', parts: contentParts(item.content, responsesPart) };
    case 'reasoning': {
      const summary = summaryText(item);
      return { role: 'assistant', item: 'reasoning', parts: [{ type: 'reasoning', text: summary || (item.encrypted_content ? '(encrypted reasoning, no summary)' : '(no summary)') }] };
    }
    case 'function_call':
    case 'custom_tool_call':
      return { role: 'assistant', item: type, parts: [{ type: 'tool_call', name: item.name ?? 'tool', id: item.call_id, arguments: prettyArguments(item.arguments ?? item.input) }] };
    case 'function_call_output':
    case 'custom_tool_call_output':
      return { role: 'tool', item: type, parts: [{ type: 'tool_result', id: item.call_id, text: prettyArguments(flatText(item.output)) }] };
    default: {
      const label = [type ?? 'item', item.status, item.action?.query ? `“${item.action.query}”` : undefined, item.id].filter(Boolean).join(' · ');
      return { role: item.role ?? 'assistant', item: type, parts: [{ type: 'chip', kind: type ?? 'item', label }] };
    }
  }
}

function responsesRequest(body) {
  const turns = [];
  if (typeof body.instructions === 'string' && body.instructions) turns.push({ role: 'instructions', parts: [text(body.instructions)] });
  if (typeof body.input === 'string') turns.push({ role: 'user', parts: [text(body.input)] });
  else if (Array.isArray(body.input)) turns.push(...body.input.map((item) => responsesItem(item)));
  return turns;
}

/** A Responses answer: the Response object, or its event stream (the final `response.completed` event, else the deltas). */
function responsesAnswer(body, raw) {
  const response = isObject(body) && Array.isArray(body.output) ? body : isObject(body?.response) && Array.isArray(body.response.output) ? body.response : undefined;
  // The Response object, or the log writer's summary of a stream with its final output items.
  if (response) return response.output.map((item) => ({ ...responsesItem(item, 'assistant'), ...(body.stream === true ? { streamed: true } : {}) }));
  const events = sseEvents(raw);
  if (!events) return undefined;
  const final = [...events].reverse().find((event) => isObject(event?.response) && Array.isArray(event.response.output) && event.response.output.length > 0);
  if (final) return final.response.output.map((item) => ({ ...responsesItem(item, 'assistant'), streamed: true }));
  // No final event (cut off): the items that were done, else the text deltas.
  const done = events.filter((event) => event?.type === 'response.output_item.done' && isObject(event.item)).map((event) => ({ ...responsesItem(event.item, 'assistant'), streamed: true }));
  if (done.length) return done;
  const deltas = events.filter((event) => event?.type === 'response.output_text.delta').map((event) => event.delta ?? '').join('');
  return [{ role: 'assistant', streamed: true, parts: [text(deltas)] }];
}

// ---- Messages API ----

/** A Messages image or document source: base64 data, a URL, text, or a file id. */
function sourcePart(source, kind, title) {
  if (!isObject(source)) return { type: 'chip', kind, label: title ?? kind };
  if (source.type === 'base64' && kind === 'image') return imagePart(`data:${source.media_type};base64,${source.data}`);
  if (source.type === 'url') return kind === 'image' || !/^https?:\/\//i.test(String(source.url)) ? imagePart(source.url, title ?? kind) : { type: 'link', label: title ?? kind, url: source.url };
  const what = source.type === 'base64' ? source.media_type : source.type === 'file' ? source.file_id : source.type;
  return { type: 'chip', kind, label: [title ?? kind, what].filter(Boolean).join(' · ') };
}

/** One Messages content block. */
export function messagesBlock(block) {
  if (typeof block === 'string') return text(block);
  if (!isObject(block)) return { type: 'chip', kind: 'block', label: JSON.stringify(block) };
  switch (block.type) {
    case 'text':
      return text(block.text ?? '');
    case 'thinking':
      return { type: 'reasoning', text: block.thinking ?? '' };
    case 'redacted_thinking':
      return { type: 'reasoning', text: '(redacted thinking)' };
    case 'tool_use':
    case 'server_tool_use':
      return { type: 'tool_call', name: block.name ?? 'tool', id: block.id, arguments: prettyArguments(block.input) };
    case 'tool_result':
      return { type: 'tool_result', id: block.tool_use_id, text: prettyArguments(flatText(block.content)), images: Array.isArray(block.content) ? block.content.filter((part) => part?.type === 'image').map((part) => sourcePart(part.source, 'image')) : [], error: block.is_error === true };
    case 'image':
      return sourcePart(block.source, 'image');
    case 'document':
      return sourcePart(block.source, 'document', block.title);
    default:
      return { type: 'chip', kind: block.type ?? 'block', label: block.type ?? 'block' };
  }
}

function messagesRequest(body) {
  const turns = [];
  if (typeof body.system === 'string' && body.system) turns.push({ role: 'system', parts: [text(body.system)] });
  else if (Array.isArray(body.system) && body.system.length) turns.push({ role: 'system', parts: body.system.map(messagesBlock) });
  for (const message of Array.isArray(body.messages) ? body.messages : []) turns.push({ role: message?.role ?? 'unknown', parts: contentParts(message?.content, messagesBlock) });
  return turns;
}

/** A Messages answer: the Message, or its event stream assembled (text, thinking and tool input deltas). */
function messagesAnswer(body, raw) {
  if (isObject(body) && Array.isArray(body.content)) return [{ role: body.role ?? 'assistant', finish: body.stop_reason, parts: body.content.map(messagesBlock) }];
  // The log writer's summary of a stream, with its content blocks assembled.
  if (isObject(body) && body.stream === true && Array.isArray(body.content_blocks)) return [{ role: 'assistant', streamed: true, finish: body.finish_reason, parts: body.content_blocks.map(messagesBlock) }];
  const events = sseEvents(raw);
  if (!events) return undefined;
  const blocks = [];
  let finish;
  for (const event of events) {
    if (event?.type === 'content_block_start' && isObject(event.content_block)) {
      const block = { ...event.content_block };
      if (block.type === 'tool_use' || block.type === 'server_tool_use') block.partial = '';
      blocks[event.index ?? blocks.length] = block;
    } else if (event?.type === 'content_block_delta') {
      const block = blocks[event.index];
      const delta = event.delta ?? {};
      if (!block) continue;
      if (delta.type === 'text_delta') block.text = (block.text ?? '') + delta.text;
      else if (delta.type === 'thinking_delta') block.thinking = (block.thinking ?? '') + delta.thinking;
      else if (delta.type === 'input_json_delta') block.partial = (block.partial ?? '') + delta.partial_json;
    } else if (event?.type === 'message_delta') finish = event.delta?.stop_reason ?? finish;
  }
  const parts = blocks.filter(Boolean).map((block) => messagesBlock(block.partial !== undefined ? { ...block, input: block.partial || block.input } : block));
  return [{ role: 'assistant', streamed: true, finish, parts }];
}

// ---- Text completions, embeddings, images ----

function completionRequest(body) {
  const prompts = Array.isArray(body.prompt) ? body.prompt : [body.prompt];
  return prompts.filter((prompt) => prompt !== undefined).map((prompt) => ({ role: 'prompt', parts: [text(typeof prompt === 'string' ? prompt : JSON.stringify(prompt))] }));
}

function completionAnswer(body, raw) {
  if (isObject(body) && Array.isArray(body.choices)) return body.choices.map((choice) => ({ role: 'completion', finish: choice.finish_reason, parts: [text(choice.text ?? '')] }));
  const answer = chatAnswer(body, raw);
  return answer?.map((turn) => ({ ...turn, role: 'completion' }));
}

/** The embedding request's inputs as text (token arrays summarised). */
function embedRequest(body) {
  const inputs = Array.isArray(body.input) && (body.input.length === 0 || typeof body.input[0] !== 'number') ? body.input : [body.input];
  return inputs.map((input, index) => ({ role: inputs.length > 1 ? `input ${index + 1}` : 'input', parts: [typeof input === 'string' ? text(input) : { type: 'chip', kind: 'tokens', label: Array.isArray(input) ? `${input.length} token ids` : JSON.stringify(input) }] }));
}

/** A vector's dimensions: an array's length, or a base64 float32 string's byte count / 4. */
function dimensionsOf(embedding) {
  if (Array.isArray(embedding)) return embedding.length;
  if (typeof embedding === 'string') return Math.floor((embedding.replace(/=+$/, '').length * 3) / 4 / 4);
  return undefined;
}

function embedAnswer(body) {
  if (!isObject(body) || !Array.isArray(body.data)) return undefined;
  const dimensions = [...new Set(body.data.map((item) => dimensionsOf(item?.embedding)).filter((value) => value !== undefined))];
  return [{ role: 'embeddings', parts: [{ type: 'vectors', count: body.data.length, dimensions: dimensions.join(' / ') || '?' }] }];
}

function imageRequest(body) {
  const settings = ['n', 'size', 'quality', 'style', 'response_format', 'background', 'output_format'].filter((name) => body[name] !== undefined).map((name) => `${name}: ${body[name]}`);
  const parts = [text(body.prompt ?? '')];
  if (settings.length) parts.push({ type: 'chip', kind: 'settings', label: settings.join(' · ') });
  return [{ role: 'prompt', parts }];
}

function imageAnswer(body) {
  if (!isObject(body) || !Array.isArray(body.data)) return undefined;
  return [{ role: 'images', parts: body.data.flatMap((image) => {
    const parts = [];
    if (typeof image?.b64_json === 'string') parts.push(imagePart(`data:image/${body.output_format ?? 'png'};base64,${image.b64_json}`, 'generated image'));
    else if (typeof image?.url === 'string') parts.push(imagePart(image.url, 'generated image'));
    if (typeof image?.revised_prompt === 'string') parts.push({ type: 'text', text: `Revised prompt: ${image.revised_prompt}` });
    return parts;
  }) }];
}

/** An error answer (`{ error: { message, type } }`, or the Messages `{ type: 'error', error }`). */
function errorAnswer(body) {
  const error = isObject(body?.error) ? body.error : undefined;
  if (!error) return undefined;
  return [{ role: 'error', parts: [text([error.type, error.code].filter(Boolean).join(' · ') + (error.message ? `: ${error.message}` : ''))] }];
}

/**
 * The log writer's summary of a streamed answer (`{ stream: true, content, finish_reason }`, see
 * core/logs/record.ts): the text the client received, in any API's stream.
 */
function streamSummary(body) {
  if (!isObject(body) || body.stream !== true || !('content' in body)) return undefined;
  const contents = Array.isArray(body.content) ? body.content : [body.content];
  const finishes = Array.isArray(body.finish_reason) ? body.finish_reason : [body.finish_reason];
  const calls = Array.isArray(body.tool_calls) ? body.tool_calls : [];
  return contents.map((content, index) => {
    const mine = calls.filter((call) => (call?.choice ?? 0) === index).map((call) => ({ type: 'tool_call', name: call.name, id: call.id, arguments: prettyArguments(call.arguments) }));
    return { role: 'assistant', streamed: true, finish: finishes[index], parts: [...(content || mine.length === 0 ? [text(content ?? '')] : []), ...mine] };
  });
}

const READERS = {
  chat: { request: (body) => (Array.isArray(body.messages) ? body.messages.map(chatTurn) : []), answer: chatAnswer },
  responses: { request: responsesRequest, answer: responsesAnswer },
  messages: { request: messagesRequest, answer: messagesAnswer },
  completion: { request: completionRequest, answer: completionAnswer },
  embed: { request: embedRequest, answer: embedAnswer },
  image: { request: imageRequest, answer: imageAnswer },
};

/** Tool names the request declares, for a line above the turns. */
function declaredTools(body) {
  const tools = Array.isArray(body?.tools) ? body.tools : [];
  return tools.map((tool) => tool?.function?.name ?? tool?.name ?? tool?.type).filter(Boolean);
}

/** Gives each tool result the name of the call it answers (matched by call id). */
function nameToolResults(turns) {
  const names = new Map();
  for (const part of turns.flatMap((turn) => turn.parts)) {
    if (part.type === 'tool_call' && part.id) names.set(part.id, part.name);
    if (part.type === 'tool_result' && part.id && !part.name && names.has(part.id)) part.name = names.get(part.id);
  }
}

/**
 * The chat view's model of a log record: `{ shape, request, answer, tools, problems }`. `request`
 * and `answer` are turns, or undefined when the body is absent or unreadable (then `problems` says
 * why); a streamed answer's turns carry `streamed: true`.
 */
export function conversationOf(record) {
  const shape = shapeOf(record);
  const problems = [];
  const reader = READERS[shape];
  if (!reader) return { shape, request: undefined, answer: undefined, tools: [], problems: ['This operation has no chat view: see the raw bodies.'] };
  const requestBody = parseJson(record.request_body);
  let request;
  if (record.request_body === null || record.request_body === undefined || record.request_body === '') problems.push('The request body was not logged.');
  else if (!isObject(requestBody)) problems.push('The stored request body is not complete JSON (truncated by the size cap?): see the raw view.');
  else request = reader.request(requestBody);
  const responseBody = parseJson(record.response_body);
  let answer;
  if (record.response_body === null || record.response_body === undefined || record.response_body === '') problems.push('The response body was not logged.');
  else {
    answer = errorAnswer(responseBody) ?? reader.answer(responseBody, record.response_body) ?? streamSummary(responseBody);
    if (!answer) problems.push('The stored response body could not be read as this API’s answer: see the raw view.');
    if (isObject(responseBody) && responseBody.truncated === true) problems.push('The streamed answer was cut by the log’s size cap: the text shown is its beginning.');
  }
  nameToolResults([...(request ?? []), ...(answer ?? [])]);
  return { shape, request, answer, tools: declaredTools(requestBody), problems };
}
