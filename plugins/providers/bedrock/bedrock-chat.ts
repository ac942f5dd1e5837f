import type { ChatAdapter } from '../../../core/spec/index.js';
import { EventStreamDecoder } from './bedrock-eventstream.js';
import { modelPath, toConverseBody } from './bedrock-request.js';
import { fromConverseResponse } from './bedrock-response.js';
import { createBedrockStreamMapper } from './bedrock-stream.js';

/** Chat through Converse / ConverseStream. */
export const bedrockChat: ChatAdapter = {
  toUpstream(request, target) {
    const action = request.stream ? 'converse-stream' : 'converse';
    return {
      method: 'POST',
      url: modelPath(target.baseUrl, request.model, action),
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(toConverseBody(request)),
    };
  },
  fromUpstream: fromConverseResponse,
  stream: {
    createDecoder: () => new EventStreamDecoder(),
    createMapper: (request, target) => createBedrockStreamMapper(request, target),
  },
};
