import { parseJsonObject, readBody } from '../http/body.js';
import type { SpeechRequest } from '../spec/unified.js';
import { type OperationHandler, unsupportedOperation } from './operation.js';
import { checkSpeechModelAndVoice, validateSpeechRequest } from './speech-schema.js';
import { characterCount } from './validate.js';

/**
 * `POST /v1/audio/speech`: the upstream's audio bytes are piped to the client as they arrive
 * (never buffered), as `application/octet-stream`. Logged as one request and its input characters.
 */
export const speech: OperationHandler = {
  name: 'speech',
  mapsErrors: true,

  async parse(request, options) {
    const raw = await readBody(request, options.bodyLimitBytes, options);
    const rawText = raw.toString('utf8');
    const body = validateSpeechRequest(parseJsonObject(rawText));
    return { body, raw, rawText, model: body.model, streaming: false };
  },

  toUpstream(context, provider, target) {
    const adapter = provider.operations.speech;
    if (!adapter) throw unsupportedOperation(provider.id, 'speech', 'POST /v1/audio/speech');
    const request = context.request.body as SpeechRequest;
    checkSpeechModelAndVoice(request, adapter);
    return adapter.toUpstream(request, target, context.request.raw);
  },

  async respond(context, _provider, forward) {
    const transform = context.transform;
    if (transform) transform.units = { requests: 1, characters: characterCount((context.request.body as SpeechRequest).input) };
    forward.body.once('end', () => {
      forward.endedAt = performance.now();
    });
    return { status: 200, headers: { 'content-type': 'application/octet-stream' }, body: { stream: forward.body } };
  },
};
