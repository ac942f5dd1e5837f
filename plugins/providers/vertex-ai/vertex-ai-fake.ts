import type { ProviderFakeRenderer } from '../../../core/spec/index.js';
import { anthropicFakeRenderer, renderAnthropic } from '../anthropic/anthropic-fake.js';
import { geminiRoles, geminiStopSequences, googleBody, renderGemini } from '../google-shared/google-shared-fake.js';

const isClaude = (url: string): boolean => /\/publishers\/anthropic\//.test(url);

/** Vertex AI answers: Gemini's shapes for Google models, Anthropic's for Claude models (rawPredict). */
export const vertexFakeRenderer: ProviderFakeRenderer = {
  classify(request) {
    if (/:(streamGenerateContent\?alt=sse|streamRawPredict)$/.test(request.url)) return { operation: 'chat', stream: true };
    if (/:(generateContent|rawPredict)$/.test(request.url)) return { operation: 'chat', stream: false };
    if (/:predict$/.test(request.url)) return { operation: 'embed', stream: false };
    return { operation: 'other', stream: false };
  },
  render(scenario, request, stream) {
    if (isClaude(request.url)) return renderAnthropic(scenario, String(/models\/([^:]+):/.exec(request.url)?.[1] ?? 'claude'), stream);
    return renderGemini(scenario, request, stream, 'predict');
  },
  checkAuth(request, credential) {
    const problems: string[] = [];
    if (request.headers.authorization !== `Bearer ${credential}`) problems.push('Authorization does not carry the Bearer access token');
    if (!/\/projects\/[^/]+\/locations\/[^/]+\/publishers\//.test(request.url)) problems.push('the URL does not name project, location and publisher');
    return problems;
  },
  roles: (request) => (isClaude(request.url) ? anthropicFakeRenderer.roles(request) : geminiRoles(googleBody(request))),
  stopSequences: (request) => (isClaude(request.url) ? anthropicFakeRenderer.stopSequences(request) : geminiStopSequences(request)),
};
