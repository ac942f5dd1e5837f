import type { ReceivedRequest, RenderedAnswer, Scenario } from '../../../core/spec/index.js';

/** Google's canonical error status per HTTP status. */
const STATUSES: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
};

const json = (value: unknown): string => JSON.stringify(value);
const sse = (value: unknown): string => `data: ${json(value)}\n\n`;
export const googleBody = (request: ReceivedRequest): Record<string, any> => (request.body.length ? JSON.parse(request.body.toString('utf8')) : {});

function split(text: string, count: number): string[] {
  const size = Math.max(1, Math.ceil(text.length / count));
  const out: string[] = [];
  for (let offset = 0; offset < text.length; offset += size) out.push(text.slice(offset, offset + size));
  return out.length ? out : [''];
}

/** How the embedding answer is shaped: AI Studio's batchEmbedContents or Vertex AI's predict. */
export type EmbeddingShape = 'batch' | 'predict';

/** Gemini `generateContent` / `streamGenerateContent?alt=sse` answers for the conformance scenarios. */
export function renderGemini(scenario: Scenario, request: ReceivedRequest, stream: boolean, embeddingShape: EmbeddingShape): RenderedAnswer {
  const jsonHeaders = { 'content-type': 'application/json' };
  if (scenario.kind === 'error') {
    const headers: Record<string, string> = { ...jsonHeaders };
    if (scenario.retryAfter) headers['retry-after'] = scenario.retryAfter;
    return { status: scenario.status, headers, chunks: [json({ error: { code: scenario.status, message: scenario.message, status: STATUSES[scenario.status] ?? 'UNKNOWN' } })] };
  }
  if (scenario.kind === 'embedding') {
    const body =
      embeddingShape === 'batch'
        ? { embeddings: scenario.vectors.map((values) => ({ values })) }
        : {
            predictions: scenario.vectors.map((values, index) => ({
              embeddings: { values, statistics: { truncated: false, token_count: index === 0 ? scenario.promptTokens - (scenario.vectors.length - 1) : 1 } },
            })),
          };
    return { status: 200, headers: jsonHeaders, chunks: [json(body)] };
  }
  const body = googleBody(request);
  const model = String(/models\/([^:/]+):/.exec(request.url)?.[1] ?? 'gemini');
  const envelope = { modelVersion: model, responseId: 'conformance-response-1' };
  if (scenario.kind === 'truncated') {
    const events = split(scenario.text, 3).map((text) => sse({ candidates: [{ content: { role: 'model', parts: [{ text }] }, index: 0 }], ...envelope }));
    return stream ? { status: 200, headers: { 'content-type': 'text/event-stream' }, chunks: events } : { status: 200, headers: jsonHeaders, chunks: ['{"candidates":[{"content":'] };
  }
  const usageMetadata = { promptTokenCount: scenario.usage.promptTokens, candidatesTokenCount: scenario.usage.completionTokens, totalTokenCount: scenario.usage.promptTokens + scenario.usage.completionTokens };
  const count = scenario.kind === 'text' ? Math.max(1, scenario.choices ?? Number(body.generationConfig?.candidateCount ?? 1)) : 1;
  const finishReason = scenario.kind === 'text' && scenario.finishReason === 'length' ? 'MAX_TOKENS' : 'STOP';
  const textOf = (index: number): string => (scenario.kind === 'text' ? (count > 1 ? `${scenario.text}${index}` : scenario.text) : '');
  if (!stream) {
    const candidates = Array.from({ length: count }, (_, index) => ({
      content: {
        role: 'model',
        parts: scenario.kind === 'text' ? [{ text: textOf(index) }] : [{ functionCall: { id: scenario.id, name: scenario.name, args: JSON.parse(scenario.arguments) } }],
      },
      finishReason,
      index,
    }));
    return { status: 200, headers: jsonHeaders, chunks: [json({ candidates, usageMetadata, ...envelope })] };
  }
  const events: string[] = [];
  if (scenario.kind === 'text') {
    const parts = Array.from({ length: count }, (_, index) => split(textOf(index), 3));
    const rounds = Math.max(...parts.map((list) => list.length));
    for (let round = 0; round < rounds; round++) {
      const last = round === rounds - 1;
      const candidates = parts.map((list, index) => ({ content: { role: 'model', parts: [{ text: list[round] ?? '' }] }, index, ...(last ? { finishReason } : {}) }));
      events.push(sse({ candidates, usageMetadata: last ? usageMetadata : { promptTokenCount: scenario.usage.promptTokens }, ...envelope }));
    }
  } else {
    events.push(sse({ candidates: [{ content: { role: 'model', parts: [{ functionCall: { id: scenario.id, name: scenario.name, args: JSON.parse(scenario.arguments) } }] }, finishReason, index: 0 }], usageMetadata, ...envelope }));
  }
  const last = events.pop()!;
  return { status: 200, headers: { 'content-type': 'text/event-stream' }, chunks: [...events, last.slice(0, 9), last.slice(9)] };
}

/** The unified roles of a Gemini body: system instruction parts, then turns (function responses read as `tool`). */
export function geminiRoles(body: Record<string, any>): string[] {
  const roles: string[] = [];
  for (const _part of body.systemInstruction?.parts ?? []) roles.push('system');
  for (const content of body.contents ?? []) {
    if (content.role === 'model') {
      roles.push('assistant');
      continue;
    }
    const parts: Array<Record<string, unknown>> = content.parts ?? [];
    for (const part of parts) if (part.functionResponse) roles.push('tool');
    if (parts.some((part) => !part.functionResponse)) roles.push('user');
  }
  return roles;
}

export const geminiStopSequences = (request: ReceivedRequest): string[] => googleBody(request).generationConfig?.stopSequences ?? [];
