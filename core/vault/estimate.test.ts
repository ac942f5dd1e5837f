import test from 'ava';
import { estimatePromptTokens } from './estimate.js';

test('file and audio parts count no tokens in the estimate: only the text around them does', (t) => {
  const data = 'QUJD'.repeat(250_000);
  const body = {
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'x'.repeat(40) },
          { type: 'file', file: { file_data: `data:application/pdf;base64,${data}`, filename: 'a.pdf' } },
          { type: 'input_audio', input_audio: { data, format: 'wav' } },
        ],
      },
    ],
  };
  // 40 characters of text, plus the part type names ("text", "file", "input_audio") and the role.
  t.is(estimatePromptTokens(body), Math.ceil((40 + 'user'.length + 'text'.length + 'file'.length + 'input_audio'.length) / 4));
});
