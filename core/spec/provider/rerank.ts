import type { RerankRequest } from '../unified.js';

/** The text of each document of a rerank request, in order (a string, or an object's `text`): what most rerank APIs take. */
export function rerankDocumentTexts(request: RerankRequest): string[] {
  return request.documents.map((document) => (typeof document === 'string' ? document : document.text));
}
