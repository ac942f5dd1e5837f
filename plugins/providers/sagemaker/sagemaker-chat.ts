import { type ChatAdapter, type ChatCompletionChunk, type ChatResponse, errors, type StreamStep } from '../../../core/spec/index.js';
import { DECODE_ERROR_EVENT, EventStreamDecoder } from '../../shared/aws-eventstream/eventstream.js';
import { parseEventData, streamError } from '../../shared/chat-mapping.js';
import { adaptChatRequest, type ChatQuirks, checkChatRequest, createCompatibleStreamMapper } from '../openai-compatible/index.js';

/** SageMaker endpoint names: letters, digits and single hyphens, 63 at most (so the name cannot leave its path segment). */
const ENDPOINT_NAME = /^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}$/;

/**
 * What the containers' OpenAI "messages" schema (LMI, TGI's Messages API, vLLM) is known to lack:
 * one choice per request; no `developer` role. The endpoint is the model: `model` is not sent.
 */
export const SAGEMAKER_CHAT_QUIRKS: ChatQuirks = { n: false };

/** The request header naming an inference component of the endpoint (sent as `X-Amzn-SageMaker-Inference-Component`). */
export const INFERENCE_COMPONENT_HEADER = 'x-gateway-sagemaker-inference-component';
const INFERENCE_COMPONENT = /^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}$/;

export function endpointPath(model: string, stream: boolean): string {
  if (!ENDPOINT_NAME.test(model)) {
    throw errors.invalidRequest(`"${model.slice(0, 64)}" is not a SageMaker endpoint name: the model is the endpoint's name.`, { param: 'model', code: 'invalid_value' });
  }
  return `/endpoints/${model}/${stream ? 'invocations-response-stream' : 'invocations'}`;
}

/** The PayloadPart bytes as lines: each a chunk as JSON, with or without a `data:` prefix (SSE or JSON lines), `[DONE]` the end. */
class PayloadLines {
  private readonly text = new TextDecoder('utf-8');
  private buffer = '';

  push(bytes: Uint8Array): string[] {
    this.buffer += this.text.decode(bytes, { stream: true });
    const lines = this.buffer.split(/\r?\n/);
    this.buffer = lines.pop() ?? '';
    return lines.map((line) => line.replace(/^data:\s?/, '').trim()).filter((line) => line !== '' && !line.startsWith(':') && !line.startsWith('event:'));
  }
}

/**
 * InvokeEndpointWithResponseStream's events to chunks: each `PayloadPart` carries some bytes of the
 * container's own stream (cut anywhere), read as lines of OpenAI chunks; `ModelStreamError` and
 * `InternalStreamFailure` end the stream with an error.
 */
function createSageMakerStreamMapper() {
  const lines = new PayloadLines();
  const inner = createCompatibleStreamMapper<ChatCompletionChunk>();
  return {
    map(event: { event?: string; data: string }): StreamStep {
      if (event.event === DECODE_ERROR_EVENT) return { error: streamError(`The SageMaker event stream is malformed: ${event.data}.`, 'malformed_stream') };
      if (event.event?.startsWith('exception:')) {
        const body = parseEventData(event.data) ?? {};
        const kind = event.event.slice('exception:'.length);
        const message = typeof body.Message === 'string' ? body.Message : typeof body.message === 'string' ? body.message : `SageMaker reported ${kind}.`;
        return { error: streamError(message, typeof body.ErrorCode === 'string' ? body.ErrorCode : kind) };
      }
      if (event.event !== 'PayloadPart') return {};
      const chunks: ChatCompletionChunk[] = [];
      for (const line of lines.push(Buffer.from(event.data, 'base64'))) {
        const step = inner.map({ data: line });
        if (step.error) return { chunks, error: step.error };
        chunks.push(...(step.chunks ?? []));
        if (step.done) return { chunks, done: true };
      }
      return { chunks };
    },
  };
}

/** Chat on an endpoint whose container takes OpenAI's messages schema: InvokeEndpoint, or InvokeEndpointWithResponseStream when streaming. */
export const sageMakerChat: ChatAdapter = {
  validate: (request) => checkChatRequest(request, SAGEMAKER_CHAT_QUIRKS, 'sagemaker'),
  toUpstream(request, target) {
    const { model: _model, ...body } = adaptChatRequest(request, SAGEMAKER_CHAT_QUIRKS) ?? request;
    // InvokeEndpoint takes the container's Accept as `Accept`; the stream API names it otherwise and needs none.
    const headers: Record<string, string> = request.stream ? { 'content-type': 'application/json' } : { 'content-type': 'application/json', accept: 'application/json' };
    const component = target.headers[INFERENCE_COMPONENT_HEADER];
    if (component !== undefined) {
      if (!INFERENCE_COMPONENT.test(component)) throw errors.invalidRequest(`"${INFERENCE_COMPONENT_HEADER}" must be an inference component name.`, { param: INFERENCE_COMPONENT_HEADER, code: 'invalid_header' });
      headers['x-amzn-sagemaker-inference-component'] = component;
    }
    return { method: 'POST', url: `${target.baseUrl}${endpointPath(request.model, request.stream === true)}`, headers, body: JSON.stringify(body) };
  },
  fromUpstream(body, request) {
    const response = body as ChatResponse;
    if (typeof response !== 'object' || response === null || !Array.isArray(response.choices)) throw new TypeError('SageMaker answer without choices (is the container serving the messages schema?)');
    // The containers name the model their own way (`tgi`, a local path): the endpoint is the model.
    return { ...response, model: request.model };
  },
  stream: {
    createDecoder: () => new EventStreamDecoder({ base64Events: ['PayloadPart'] }),
    createMapper: createSageMakerStreamMapper,
  },
};
