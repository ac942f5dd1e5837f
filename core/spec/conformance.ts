import type { ProviderRegistration } from './provider.js';

/**
 * The conformance kit's contract with a provider plugin's author: the plugin, plus a renderer that
 * answers the kit's scenarios in the provider's own wire format. The kit owns the loopback server,
 * the gateway and the official SDK client; the renderer is pure (request in, answer out).
 */

export interface FakeUsage {
  readonly promptTokens: number;
  readonly completionTokens: number;
}

/** What the kit wants the fake provider to answer. */
export type Scenario =
  /** A text answer; with `choices` > 1 (the `n` check) every choice carries the same text with its index appended. */
  | { readonly kind: 'text'; readonly text: string; readonly finishReason: 'stop' | 'length'; readonly usage: FakeUsage; readonly choices?: number }
  /** One function call with its JSON arguments (streamed: split into several fragments). */
  | { readonly kind: 'toolCall'; readonly id: string; readonly name: string; readonly arguments: string; readonly usage: FakeUsage }
  | { readonly kind: 'embedding'; readonly vectors: readonly (readonly number[])[]; readonly promptTokens: number }

  /** The provider's documented error body for this status; `retryAfter` goes in a `Retry-After` header. */
  | { readonly kind: 'error'; readonly status: number; readonly message: string; readonly retryAfter?: string }
  /** A stream that stops after some text, without the provider's end-of-stream event. */
  | { readonly kind: 'truncated'; readonly text: string };

/**
 * A rerank answer for {@link ProviderFakeRenderer.renderRerank}: one score per document, in the
 * documents' order (the fake answers them in that order, not best first: the core sorts), and what
 * the provider bills, in its own units. Apart from {@link Scenario} so that a fake written before
 * rerank existed still compiles.
 */
export interface RerankScenario {
  readonly kind: 'rerank';
  readonly scores: readonly number[];
  readonly tokens: number;
  readonly searchUnits: number;
}

/**
 * A text-to-speech answer for {@link ProviderFakeRenderer.renderSpeech}: the audio bytes the provider
 * sends back (the core relays them to the client unchanged).
 */
export interface SpeechScenario {
  readonly kind: 'speech';
  readonly audio: Uint8Array;
}

/**
 * A transcription answer for {@link ProviderFakeRenderer.renderTranscription}: the transcript's text
 * and the audio's duration in seconds, written in the provider's own answer format.
 */
export interface TranscriptionScenario {
  readonly kind: 'transcription';
  readonly text: string;
  readonly seconds: number;
}

/** An image generation answer for {@link ProviderFakeRenderer.renderImage}: the one image the provider made. */
export interface ImageScenario {
  readonly kind: 'image';
  readonly png: Uint8Array;
}

/** A request as the fake provider received it. */
export interface ReceivedRequest {
  readonly method: string;
  /** Path and query, e.g. `/v1/chat/completions`. */
  readonly url: string;
  /** Lower-cased header names. */
  readonly headers: Readonly<Record<string, string | undefined>>;
  readonly body: Buffer;
}

/** The provider's answer: status, headers and body pieces (each written separately, so framing is split across reads). */
export interface RenderedAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly chunks: ReadonlyArray<string | Uint8Array>;
}

export interface ProviderFakeRenderer {
  /** Which operation a received request is, and whether it asks for a stream. */
  classify(request: ReceivedRequest): { operation: 'chat' | 'embed' | 'rerank' | 'image' | 'speech' | 'transcription' | 'other'; stream: boolean };
  render(scenario: Scenario, request: ReceivedRequest, stream: boolean): RenderedAnswer;
  /** A rerank answer in the provider's format (a request `classify` called `rerank`); absent when the plugin has no rerank. */
  renderRerank?(scenario: RerankScenario, request: ReceivedRequest): RenderedAnswer;
  /** An image generation answer in the provider's format (a request `classify` called `image`); absent when the plugin has none. */
  renderImage?(scenario: ImageScenario, request: ReceivedRequest): RenderedAnswer;
  /** A speech answer in the provider's format (a request `classify` called `speech`); absent when the plugin has no speech. */
  renderSpeech?(scenario: SpeechScenario, request: ReceivedRequest): RenderedAnswer;
  /** A transcription answer in the provider's format (a request `classify` called `transcription`); absent when the plugin has none. */
  renderTranscription?(scenario: TranscriptionScenario, request: ReceivedRequest): RenderedAnswer;
  /** Problems with how the request carries `credential` compared with the provider's documentation (empty when right). */
  checkAuth(request: ReceivedRequest, credential: string): string[];
  /** The chat roles the provider received, in order, in unified names (`system`, `developer`, `user`, `assistant`, `tool`). */
  roles(request: ReceivedRequest): string[];
  /** The stop sequences the provider received. */
  stopSequences(request: ReceivedRequest): string[];
}

/** One provider plugin under test. */
export interface ConformanceSubject {
  readonly registration: ProviderRegistration;
  readonly fake: ProviderFakeRenderer;
  /** Chat model id the kit sends. */
  readonly model: string;
  /** Embedding model id, when the plugin declares embeddings. */
  readonly embeddingModel?: string;
  /** The Bearer credential the kit sends (default `test-provider-key`). */
  readonly credential?: string;
  /** Extra request headers the provider needs (cloud headers such as region or deployment). */
  readonly headers?: Readonly<Record<string, string>>;
  /** Whether the provider honours `n` > 1 (the check is skipped, and reported so, when false). */
  readonly supportsN?: boolean;
  /** Whether the provider keeps the `developer` role for `model` (else the kit expects `system`). */
  readonly developerRole?: boolean;
  /** Whether the provider supports tool calls (default true; the tool checks are skipped, and reported so, when false). */
  readonly supportsTools?: boolean;
  /**
   * Whether the provider's embeddings API reports token usage (default true). When false the kit
   * accepts zero usage and says so in the row; the gateway cannot invent counts the provider never sent.
   */
  readonly reportsEmbeddingUsage?: boolean;
  /** Inputs the embedding model takes in one request (default 2 or more; Titan takes 1). */
  readonly maxEmbeddingInputs?: number;
  /** Rerank model id, when the plugin declares rerank. */
  readonly rerankModel?: string;
  /**
   * What the provider's rerank answer reports as usage: tokens, search units, or nothing (Bedrock):
   * the kit expects it in the unified answer's `usage` (default `tokens`).
   */
  readonly rerankUsage?: 'tokens' | 'search_units' | 'none';
  /** Image model the kit sends, when the plugin declares image generation (default `dall-e-3`). */
  readonly imageModel?: string;
  /** Speech model and voice the kit sends, when the plugin declares speech (default `tts-1` and `alloy`). */
  readonly speechModel?: string;
  readonly speechVoice?: string;
  /** Transcription model the kit sends, when the plugin declares transcription (default `whisper-1`). */
  readonly transcriptionModel?: string;
}
