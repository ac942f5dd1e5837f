/**
 * The OpenAPI (JSON Schema 2020-12) description of the Gemini API routes: the bounds `schema.ts`
 * enforces, for `core/api/openapi.ts`. Fields the gateway does not read are described by Google's
 * reference and kept as sent.
 */

type Schema = Record<string, unknown>;

const string: Schema = { type: 'string' };
const object: Schema = { type: 'object' };
const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });

const part: Schema = {
  type: 'object',
  description: 'One part: `text` (a thought when `thought` is true), `inlineData`, `fileData`, `functionCall`, `functionResponse`; `thoughtSignature` as the model gave it.',
  properties: { text: string, thought: { type: 'boolean' }, thoughtSignature: string, inlineData: object, fileData: object, functionCall: object, functionResponse: object },
};

const content: Schema = {
  type: 'object',
  required: ['parts'],
  properties: { role: { type: 'string', description: '`user` or `model`.' }, parts: { type: 'array', items: ref('GeminiPart') } },
};

const generationConfig: Schema = {
  type: 'object',
  description: 'On a translated provider: temperature, topP, topK (where the provider takes it), maxOutputTokens, stopSequences, candidateCount, seed, penalties, responseMimeType / responseSchema / responseJsonSchema (a JSON-schema response format; 400 on a provider without one) and thinkingConfig are mapped; other fields are dropped and logged (docs/protocols.md).',
  properties: {
    temperature: { type: 'number', minimum: 0, maximum: 2 },
    topP: { type: 'number', minimum: 0, maximum: 1 },
    topK: { type: 'integer', minimum: 1 },
    maxOutputTokens: { type: 'integer', minimum: 1 },
    candidateCount: { type: 'integer', minimum: 1, maximum: 8 },
    stopSequences: { type: 'array', maxItems: 5, items: string },
    thinkingConfig: object,
    responseSchema: object,
  },
};

const generateProperties: Schema = {
  contents: { type: 'array', minItems: 1, items: ref('GeminiContent') },
  systemInstruction: { anyOf: [string, ref('GeminiContent')] },
  tools: { type: 'array', items: object, description: '`functionDeclarations` are mapped to function tools on translated providers; Google\'s built-in tools (googleSearch, codeExecution, urlContext, …) are dropped there and logged.' },
  toolConfig: object,
  safetySettings: { type: 'array', description: 'Sent to Google; dropped and logged elsewhere.' },
  generationConfig,
  cachedContent: { type: 'string', description: 'Google only: a translated provider answers 400.' },
};

/** `:generateContent` and `:streamGenerateContent`. */
export const geminiGenerateRequestSchema: Schema = {
  type: 'object',
  description: 'A Gemini API `GenerateContentRequest`; the model is the path\'s. Fields the gateway does not read are kept (and sent to providers that take the API natively).',
  required: ['contents'],
  properties: generateProperties,
};

const embedRequest: Schema = {
  type: 'object',
  required: ['content'],
  properties: { model: string, content: ref('GeminiContent'), taskType: string, title: string, outputDimensionality: { type: 'integer', minimum: 1 } },
};

/** The schemas the Gemini routes add to the document's components. */
export const geminiSchemas: Record<string, Schema> = {
  GeminiPart: part,
  GeminiContent: content,
  GeminiGenerateContentRequest: geminiGenerateRequestSchema,
  GeminiCountTokensRequest: {
    type: 'object',
    description: '`contents` (with the other request fields), or a whole `generateContentRequest`.',
    anyOf: [{ required: ['contents'] }, { required: ['generateContentRequest'] }],
    properties: { ...generateProperties, generateContentRequest: ref('GeminiGenerateContentRequest') },
  },
  GeminiEmbedContentRequest: embedRequest,
  GeminiBatchEmbedContentsRequest: { type: 'object', required: ['requests'], properties: { requests: { type: 'array', minItems: 1, items: embedRequest } } },
  GenerateContentResponse: {
    type: 'object',
    properties: {
      candidates: {
        type: 'array',
        items: { type: 'object', properties: { content: ref('GeminiContent'), finishReason: { type: 'string', description: '`STOP`, `MAX_TOKENS`, `SAFETY` (an output guardrail denial, with no parts), …' }, index: { type: 'integer' } } },
      },
      promptFeedback: { type: 'object', description: 'A prompt an input guardrail denied: `blockReason: "SAFETY"`, no candidates, status 200.', properties: { blockReason: string } },
      usageMetadata: { type: 'object', properties: { promptTokenCount: { type: 'integer' }, candidatesTokenCount: { type: 'integer' }, thoughtsTokenCount: { type: 'integer' }, totalTokenCount: { type: 'integer' } } },
      modelVersion: string,
      responseId: string,
    },
  },
  GeminiTokenCount: { type: 'object', required: ['totalTokens'], properties: { totalTokens: { type: 'integer' } } },
  GeminiEmbedResponse: {
    type: 'object',
    description: '`embedding` for embedContent, `embeddings` for batchEmbedContents.',
    properties: { embedding: { type: 'object', properties: { values: { type: 'array', items: { type: 'number' } } } }, embeddings: { type: 'array', items: { type: 'object', properties: { values: { type: 'array', items: { type: 'number' } } } } } },
  },
  GeminiModelList: { type: 'object', properties: { models: { type: 'array', items: { type: 'object', properties: { name: string, displayName: string, supportedGenerationMethods: { type: 'array', items: string } } } } } },
  GoogleError: {
    type: 'object',
    description: "Errors on the Gemini routes have Google's shape, the gateway's own included; the gateway's error code is the `ErrorInfo` detail's `reason`, the field in its `metadata.field`.",
    required: ['error'],
    properties: { error: { type: 'object', required: ['code', 'message', 'status'], properties: { code: { type: 'integer' }, message: string, status: string, details: { type: 'array', items: object } } } },
  },
};
