import test from 'ava';
import { geminiModelPath } from '../../core/api/protocols/gemini/schema.js';

test('a Gemini route names its model (provider prefixes as path segments, escapes decoded) and its method', (t) => {
  t.deepEqual(geminiModelPath('/v1beta/models/gemini-2.5-flash:generateContent'), { model: 'gemini-2.5-flash', method: 'generateContent' });
  t.deepEqual(geminiModelPath('/v1/models/gemini-2.5-flash:countTokens'), { model: 'gemini-2.5-flash', method: 'countTokens' });
  t.deepEqual(geminiModelPath('/v1beta/models/anthropic/claude-sonnet-4-5:streamGenerateContent'), { model: 'anthropic/claude-sonnet-4-5', method: 'streamGenerateContent' });
  t.deepEqual(geminiModelPath('/v1beta/models/my%20model:embedContent'), { model: 'my model', method: 'embedContent' });
});

test('any other path is not a Gemini model route', (t) => {
  for (const path of [
    '/v1beta/models/gemini:unknownMethod',
    '/v1beta/models/:generateContent',
    '/v1beta/models/a:b:generateContent',
    '/v1beta/models/gemini',
    '/v1beta/modelsx/gemini:generateContent',
    '/v2/models/gemini:generateContent',
    '/v1beta/models/%E0%A4%A:generateContent',
    '/v1beta/models/gemini:generateContent/extra',
  ]) t.is(geminiModelPath(path), undefined, path);
});
