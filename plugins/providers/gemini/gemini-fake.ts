import type { ProviderFakeRenderer } from '../../../core/spec/index.js';
import { geminiRoles, geminiStopSequences, googleBody, renderGemini } from '../google-shared/google-shared-fake.js';

export const geminiFakeRenderer: ProviderFakeRenderer = {
  classify(request) {
    if (/:streamGenerateContent\?alt=sse$/.test(request.url)) return { operation: 'chat', stream: true };
    if (/:generateContent$/.test(request.url)) return { operation: 'chat', stream: false };
    if (/:batchEmbedContents$/.test(request.url)) return { operation: 'embed', stream: false };
    return { operation: 'other', stream: false };
  },
  render: (scenario, request, stream) => renderGemini(scenario, request, stream, 'batch'),
  checkAuth(request, credential) {
    const problems: string[] = [];
    if (request.headers['x-goog-api-key'] !== credential) problems.push('x-goog-api-key does not carry the credential');
    if (/[?&]key=/.test(request.url)) problems.push('the key was sent in the URL');
    if (request.headers.authorization) problems.push('an Authorization header was sent to Google AI Studio');
    return problems;
  },
  roles: (request) => geminiRoles(googleBody(request)),
  stopSequences: geminiStopSequences,
};
