import { type ContentPartSupport, errors, type FilePart } from '../../../core/spec/index.js';

/** Converse document formats, by the media type of a `file` part's `file_data`. */
const DOCUMENT_FORMATS: Readonly<Record<string, string>> = {
  'application/pdf': 'pdf',
  'text/csv': 'csv',
  'application/msword': 'doc',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'docx',
  'application/vnd.ms-excel': 'xls',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 'xlsx',
  'text/html': 'html',
  'text/plain': 'txt',
  'text/markdown': 'md',
};

/** Bedrock takes files inline in its document formats; no audio, no OpenAI file ids. */
export const BEDROCK_CONTENT_PARTS: ContentPartSupport = { file: { mediaTypes: Object.keys(DOCUMENT_FORMATS), fileId: false } };

/**
 * A file name as Converse allows a document's `name`: ASCII letters and digits, single spaces,
 * hyphens, parentheses and square brackets, 1 to 200 characters. The extension is dropped (the
 * format says it), other characters become hyphens.
 */
export function documentName(filename: string | undefined): string {
  const name = (filename ?? '')
    .replace(/\.[A-Za-z0-9]{1,5}$/, '')
    .replace(/\s+/g, ' ')
    .replace(/[^A-Za-z0-9 ()[\]-]+/g, '-')
    .slice(0, 200)
    .trim();
  return name === '' ? 'document' : name;
}

/** Names the documents of one request, each unique (`report`, `report (2)`, …). */
export function documentNamer(): (filename: string | undefined) => string {
  const used = new Set<string>();
  return (filename) => {
    const base = documentName(filename);
    let name = base;
    for (let number = 2; used.has(name); number++) name = `${base.slice(0, 190).trim()} (${number})`;
    used.add(name);
    return name;
  };
}

/** A `file` part as a Converse `document` block. */
export function documentBlock(file: FilePart, name: string, param: string): { document: { format: string; name: string; source: { bytes: string } } } {
  const format = file.inline ? DOCUMENT_FORMATS[file.inline.mediaType] : undefined;
  // The core refused other files already (BEDROCK_CONTENT_PARTS); this guards a direct caller of the mapper.
  if (!file.inline || !format) throw errors.invalidRequest(`Invalid '${param}': Bedrock takes files inline as file_data, in its document formats.`, { param, code: 'unsupported_content_part' });
  return { document: { format, name, source: { bytes: file.inline.data } } };
}
