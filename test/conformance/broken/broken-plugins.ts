import { type ChatCompletionChunk, type ChatStreamMapper, encodeMultipart, type ProviderPlugin, type ProviderRegistration } from '../../../core/spec/index.js';
import { compatibleSubject } from '../../../plugins/providers/openai-compatible/openai-compatible-fake.js';
import { type CompatibleProviderManifest, defineCompatibleProvider } from '../../../plugins/providers/openai-compatible/index.js';
import type { ConformanceSubject } from '../../../core/conformance/index.js';

/**
 * Deliberately broken provider plugins: each is a correct compatible plugin with one bug put in,
 * so the kit is proven able to fail, and to name the check that caught the bug.
 */

const manifest = (id: string): CompatibleProviderManifest => ({
  id,
  name: `Broken (${id})`,
  description: 'A deliberately broken test plugin.',
  baseUrl: 'http://127.0.0.1:9/v1',
  operations: ['chat'],
  auth: { kind: 'bearer' },
});

/** The registration of `id` with its created plugin changed by `breakIt`. */
function broken(id: string, breakIt: (plugin: ProviderPlugin) => ProviderPlugin): () => ProviderRegistration {
  const registration = defineCompatibleProvider(manifest(id))();
  return () => ({ ...registration, create: (dependencies) => breakIt(registration.create(dependencies)) });
}

/** Wraps the plugin's chat stream mapper, changing every chunk it emits. */
function withChunks(plugin: ProviderPlugin, change: (chunk: ChatCompletionChunk) => ChatCompletionChunk): ProviderPlugin {
  const chat = plugin.operations.chat;
  if (!chat?.stream) throw new Error('no chat stream to break');
  const stream = chat.stream;
  return {
    ...plugin,
    operations: {
      ...plugin.operations,
      chat: {
        ...chat,
        stream: {
          createMapper(request, target): ChatStreamMapper {
            const mapper = stream.createMapper(request, target);
            return {
              map(event) {
                const step = mapper.map(event);
                return step.chunks ? { ...step, chunks: step.chunks.map(change) } : step;
              },
            };
          },
        },
      },
    },
  };
}

/** Bug: usage is dropped from streamed chunks. */
export const dropsStreamUsage: ConformanceSubject = compatibleSubject(
  broken('broken-drops-usage', (plugin) => withChunks(plugin, ({ usage: _usage, ...chunk }) => chunk as ChatCompletionChunk)),
  manifest('broken-drops-usage'),
  { model: 'broken-model' },
);

/** Bug: the error mapper does not expect a rate-limit reply and throws, so the client gets a 500. */
export const maps429To500: ConformanceSubject = compatibleSubject(
  broken('broken-429-as-500', (plugin) => ({
    ...plugin,
    mapError(reply) {
      if (reply.status === 429) throw new Error('unexpected upstream status');
      return plugin.mapError(reply);
    },
  })),
  manifest('broken-429-as-500'),
  { model: 'broken-model' },
);

/** Bug: only the first arguments fragment of a streamed tool call is kept. */
export function losesToolFragments(): ConformanceSubject {
  const seen = new Set<number>();
  return compatibleSubject(
    broken('broken-tool-fragments', (plugin) =>
      withChunks(plugin, (chunk) => ({
        ...chunk,
        choices: chunk.choices.map((choice) => ({
          ...choice,
          delta: {
            ...choice.delta,
            tool_calls: choice.delta.tool_calls?.map((call) => {
              if (call.function?.arguments && seen.has(call.index)) return { ...call, function: { ...call.function, arguments: '' } };
              if (call.function?.arguments) seen.add(call.index);
              return call;
            }),
          },
        })),
      })),
    ),
    manifest('broken-tool-fragments'),
    { model: 'broken-model' },
  );
}

/** Bug: an answer cut by the token limit is reported as a natural stop, plain and streamed. */
export const lengthAsStop: ConformanceSubject = compatibleSubject(
  broken('broken-length-as-stop', (plugin) => {
    const chat = plugin.operations.chat!;
    const asStop = <T extends { finish_reason: string | null }>(choice: T): T => (choice.finish_reason === 'length' ? { ...choice, finish_reason: 'stop' } : choice);
    const withStream = withChunks(plugin, (chunk) => ({ ...chunk, choices: chunk.choices.map(asStop) }));
    return {
      ...withStream,
      operations: {
        ...withStream.operations,
        chat: {
          ...withStream.operations.chat!,
          fromUpstream(body, request, target, headers) {
            const response = chat.fromUpstream(body, request, target, headers);
            return { ...response, choices: response.choices.map(asStop) };
          },
        },
      },
    };
  }),
  manifest('broken-length-as-stop'),
  { model: 'broken-model' },
);

/** Bug: tool-role messages are left out of the upstream request, on a provider that declares no tools. */
export const dropsToolTurns: ConformanceSubject = (() => {
  const toolLess: CompatibleProviderManifest = { ...manifest('broken-drops-tool-turns'), chat: { unsupportedFields: ['tools', 'tool_choice'] } };
  const registration = defineCompatibleProvider(toolLess)();
  const factory = (): ProviderRegistration => ({
    ...registration,
    create(dependencies) {
      const plugin = registration.create(dependencies);
      const chat = plugin.operations.chat!;
      return {
        ...plugin,
        operations: {
          ...plugin.operations,
          chat: { ...chat, toUpstream: (request, target) => chat.toUpstream({ ...request, messages: request.messages.filter((message) => message.role !== 'tool') }, target) },
        },
      };
    },
  });
  return compatibleSubject(factory, toolLess, { model: 'broken-model' });
})();

/** Bug: speech is declared but the voice is left out of the upstream body (the provider refuses it). */
export const dropsSpeechVoice: ConformanceSubject = compatibleSubject(
  broken('broken-speech-voice', (plugin) => ({
    ...plugin,
    operations: {
      ...plugin.operations,
      speech: {
        toUpstream: ({ voice: _voice, ...request }, target) => ({
          method: 'POST',
          url: `${target.baseUrl}/audio/speech`,
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(request),
        }),
      },
    },
  })),
  manifest('broken-speech-voice'),
  { model: 'broken-model' },
);

/** Bug: transcription is declared but the uploaded audio is left out of the form sent upstream. */
export const dropsTranscriptionFile: ConformanceSubject = compatibleSubject(
  broken('broken-transcription-file', (plugin) => ({
    ...plugin,
    operations: {
      ...plugin.operations,
      transcription: {
        toUpstream(form, target) {
          const { body, headers } = encodeMultipart({ ...form, files: [] });
          return { method: 'POST', url: `${target.baseUrl}/audio/transcriptions`, headers, body };
        },
      },
    },
  })),
  manifest('broken-transcription-file'),
  { model: 'broken-model' },
);

/** Bug: image generation is declared but the answer's image is re-encoded as a URL-safe string (not the provider's bytes). */
export const mangledImage: ConformanceSubject = compatibleSubject(
  broken('broken-image-bytes', (plugin) => ({
    ...plugin,
    operations: {
      ...plugin.operations,
      imageGenerate: {
        toUpstream: (request, target) => ({ method: 'POST', url: `${target.baseUrl}/images/generations`, headers: { 'content-type': 'application/json' }, body: JSON.stringify(request) }),
        fromUpstream: (body) => {
          const answer = body as { created: number; data: Array<{ b64_json?: string }> };
          return { ...answer, data: answer.data.map((image) => ({ b64_json: Buffer.from(image.b64_json ?? '', 'base64').toString('base64url') })) };
        },
      },
    },
  })),
  manifest('broken-image-bytes'),
  { model: 'broken-model' },
);
