import { isRecord } from '../spec/is-record.js';
import type { RerankRequest } from '../spec/unified.js';
import { describe, invalid, optionalBoolean, optionalNumber, requireString } from './validate.js';

/** Most documents one rerank request may carry (the providers' own limits are lower: Cohere and Voyage take 1 000). */
export const MAX_RERANK_DOCUMENTS = 10_000;

/**
 * Validates a rerank request (Cohere's shape): `model` and `query` non-empty strings, `documents` 1
 * to {@link MAX_RERANK_DOCUMENTS} strings or objects with a string `text`, `top_n` an integer of at
 * least 1, `return_documents` a boolean. Unknown fields are kept (a provider may read its own).
 */
export function validateRerankRequest(body: Record<string, unknown>): RerankRequest {
  requireString(body.model, 'model', { nonEmpty: true });
  requireString(body.query, 'query', { nonEmpty: true });
  const documents = body.documents;
  if (documents === undefined || documents === null) throw invalid('is required.', { param: 'documents' });
  if (!Array.isArray(documents)) throw invalid(`expected an array of strings or of objects with "text", got ${describe(documents)}.`, { param: 'documents' });
  if (documents.length === 0) throw invalid('must hold at least one document.', { param: 'documents' });
  if (documents.length > MAX_RERANK_DOCUMENTS) throw invalid(`must hold at most ${MAX_RERANK_DOCUMENTS} documents, got ${documents.length}.`, { param: 'documents' });
  documents.forEach((document: unknown, index) => {
    if (typeof document === 'string') return;
    if (!isRecord(document)) throw invalid(`expected a string or an object with "text", got ${describe(document)}.`, { param: `documents[${index}]` });
    requireString(document.text, `documents[${index}].text`);
  });
  optionalNumber(body.top_n, 'top_n', { min: 1, integer: true });
  optionalBoolean(body.return_documents, 'return_documents');
  return body as RerankRequest;
}
