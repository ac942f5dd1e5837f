import type { ConformanceSubject, ProviderFakeRenderer } from '../../../test/conformance/subject.js';
import { geminiRoles, geminiStopSequences, googleBody, renderGemini } from '../google-shared/google-fake-renderer.js';
import { gemini } from './index.js';

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

export const subject: ConformanceSubject = {
  registration: gemini(),
  fake: geminiFakeRenderer,
  model: 'gemini-2.5-flash',
  embeddingModel: 'gemini-embedding-001',
  // batchEmbedContents answers carry no token counts: usage is reported as zeros.
  reportsEmbeddingUsage: false,
  credential: 'AIza-conformance-key',
  supportsN: true,
  developerRole: false,
};
