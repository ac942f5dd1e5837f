import type { RealtimeAdapter } from '../../../core/spec/index.js';

/**
 * `wss://api.openai.com/v1/realtime?model=…`. The beta interface is asked for with
 * `OpenAI-Beta: realtime=v1`: sent when the client asked for it (the header, or a browser's
 * `openai-beta.realtime-v1` subprotocol); the generally available interface needs none.
 */
export const openAIRealtime: RealtimeAdapter = {
  toUpstream(request, target) {
    const headers: Record<string, string> = {};
    const beta = target.headers['openai-beta'];
    const protocols = target.headers['sec-websocket-protocol'] ?? '';
    if (beta?.includes('realtime=v1') || /(^|,)\s*openai-beta\.realtime-v1\s*(,|$)/.test(protocols)) headers['openai-beta'] = 'realtime=v1';
    return { method: 'GET', url: `${target.baseUrl}/realtime?model=${encodeURIComponent(request.model)}`, headers };
  },
};
