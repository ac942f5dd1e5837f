import type { MessagesBlock, MessagesCountRequest } from '../../../spec/messages.js';
import { isRecord } from '../../../spec/is-record.js';

/**
 * The estimate of `POST /v1/messages/count_tokens` for providers that cannot count natively
 * (docs/protocols.md): text tokenized with o200k_base (the tokenizer of OpenAI's current models,
 * a close stand-in for most modern BPE vocabularies), plus fixed allowances for what is not text.
 */

/** Tokens per message for its role and separators, and per tool definition (names, framing). */
const PER_MESSAGE = 3;
const PER_TOOL = 8;
/** An image: Anthropic's cap for one image (about 1.15 megapixels at 750 pixels per token). */
const PER_IMAGE = 1600;
/** A PDF page: its rendered image plus its text, as Anthropic documents it (1,500-3,000 tokens). */
const PER_PDF_PAGE = 2000;
/** Characters tokenized at a time: BPE cost grows with the square of an unbroken run's length. */
const PIECE_CHARS = 1000;

type Count = (text: string) => number;
let tokenizer: Promise<Count> | undefined;

/** o200k_base, loaded on first need (its rank table costs memory and time most gateways never spend). */
function counter(): Promise<Count> {
  tokenizer ??= import('gpt-tokenizer/encoding/o200k_base').then(({ countTokens }) => {
    // Special-token text such as "<|endoftext|>" is ordinary text here.
    const options = { disallowedSpecial: new Set<string>() };
    return (text: string) => countTokens(text, options);
  });
  return tokenizer;
}

/** Pieces tokenized between two yields to the event loop, so a large request does not hold the thread. */
const PIECES_PER_TURN = 64;

/**
 * Tokens of `text`, in pieces that end before a space where there is one (a cut inside a run may add
 * one token), yielding to the event loop now and then.
 */
async function countText(text: string, count: Count): Promise<number> {
  if (text.length <= PIECE_CHARS) return count(text);
  let tokens = 0;
  let pieces = 0;
  for (let start = 0; start < text.length; ) {
    if (++pieces % PIECES_PER_TURN === 0) await new Promise(setImmediate);
    let end = Math.min(text.length, start + PIECE_CHARS);
    const space = end < text.length ? text.lastIndexOf(' ', end) : -1;
    if (space > start + PIECE_CHARS / 2) end = space;
    else if (end < text.length && /[\uD800-\uDBFF]/.test(text[end - 1])) end--;
    tokens += count(text.slice(start, end));
    start = end;
  }
  return tokens;
}

/** An image's tokens from a PNG's header (width × height / 750, capped), else the cap. */
function imageTokens(source: Record<string, unknown>): number {
  if (source.type !== 'base64' || source.media_type !== 'image/png' || typeof source.data !== 'string') return PER_IMAGE;
  const head = Buffer.from(source.data.slice(0, 44), 'base64');
  if (head.length < 24 || head.toString('latin1', 12, 16) !== 'IHDR') return PER_IMAGE;
  return Math.min(PER_IMAGE, Math.ceil((head.readUInt32BE(16) * head.readUInt32BE(20)) / 750));
}

/** A PDF's page count from its page objects (`/Type /Page`), at least one. */
function pdfPages(data: string): number {
  const pages = Buffer.from(data, 'base64').toString('latin1').match(/\/Type\s*\/Page(?![a-z])/g);
  return Math.max(1, pages?.length ?? 0);
}

/** The texts of a request and its allowance for images, documents and framing. */
function collect(request: MessagesCountRequest): { texts: string[]; fixed: number } {
  const texts: string[] = [];
  let fixed = 0;
  const blocks = (content: string | readonly MessagesBlock[] | undefined): void => {
    if (typeof content === 'string') texts.push(content);
    else for (const block of content ?? []) visit(block);
  };
  const visit = (block: MessagesBlock): void => {
    const source = isRecord(block.source) ? block.source : {};
    switch (block.type) {
      case 'text':
        texts.push(String(block.text));
        break;
      case 'image':
        fixed += imageTokens(source);
        break;
      case 'document':
        if (source.type === 'base64' && typeof source.data === 'string') fixed += PER_PDF_PAGE * pdfPages(source.data);
        else if (typeof source.data === 'string') texts.push(source.data);
        else blocks(source.content as string | MessagesBlock[] | undefined);
        break;
      case 'tool_use':
        texts.push(String(block.name), JSON.stringify(block.input ?? {}));
        break;
      case 'tool_result':
        blocks(block.content as string | MessagesBlock[] | undefined);
        break;
      case 'thinking':
        texts.push(String(block.thinking));
        break;
    }
  };
  blocks(request.system);
  for (const message of request.messages) {
    fixed += PER_MESSAGE;
    blocks(message.content);
  }
  for (const tool of Array.isArray(request.tools) ? (request.tools as Array<Record<string, unknown>>) : []) {
    fixed += PER_TOOL;
    texts.push(String(tool.name ?? ''), typeof tool.description === 'string' ? tool.description : '', tool.input_schema ? JSON.stringify(tool.input_schema) : '');
  }
  return { texts, fixed };
}

/** The estimated input tokens of a Messages request (see the module comment for the method). */
export async function estimateInputTokens(request: MessagesCountRequest): Promise<number> {
  const count = await counter();
  const { texts, fixed } = collect(request);
  let tokens = fixed;
  for (const text of texts) if (text) tokens += await countText(text, count);
  return tokens;
}
