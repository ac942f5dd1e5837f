import test from 'ava';
import fc from 'fast-check';
import { redactSecrets } from './redact.js';

// The straightforward form of the secret-name patterns (each match starts at the first character
// of the name). `redactSecrets` uses a faster form that starts at the word; both must agree.
const NAME = '[A-Za-z0-9_.-]*(?:password|passwd|passphrase|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|credentials?)';
const PAIR = new RegExp(`(?<![A-Za-z0-9_.-])(${NAME})=[^&\\s"'\\\\#]+`, 'gi');
const MEMBER = new RegExp(`(\\\\?"${NAME}\\\\?"\\s*:\\s*\\\\?")(?:[^"\\\\]|\\\\[^"])+`, 'gi');
const reference = (text: string) => text.replace(PAIR, '$1=[REDACTED]').replace(MEMBER, '$1[REDACTED]');

const pieces = ['password', 'Token', 'tokens', 'api-key', 'API_KEY', 'client_', 'my.', 'x-', 'secret', 'credential', 'credentials', '=', '"', '\\"', ':', ' ', '&', '#', 'a', '1', 'value', '{', '}'];

test('secret-named values are redacted exactly as the name-first patterns redact them', (t) => {
  fc.assert(
    fc.property(fc.array(fc.constantFrom(...pieces), { maxLength: 24 }), (parts) => {
      const text = parts.join('');
      // No key-shaped words in the pieces, so only the secret-name patterns act.
      return redactSecrets(text, []) === reference(text);
    }),
    { numRuns: 3000 },
  );
  t.is(redactSecrets('{"client_secret": "s3", "max_tokens": 5} a.b_token=q&x=1', []), '{"client_secret": "[REDACTED]", "max_tokens": 5} a.b_token=[REDACTED]&x=1');
});
