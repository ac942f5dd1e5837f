import test from 'ava';
import { formatReport, runConformance, shippedSubjects } from '../../core/conformance/index.js';
import { pluginDependencies } from '../plugin-dependencies.js';

// Every provider folder's conformance subject, found by convention (`<id>-conformance.ts`).
const subjects = await shippedSubjects();

test('the shipped providers include the OpenAI-compatible family', (t) => {
  const ids = subjects.map((subject) => subject.registration.manifest.id);
  t.true(ids.length >= 25, `found ${ids.length}: ${ids.join(', ')}`);
  for (const id of ['openai', 'groq', 'mistral', 'ollama', 'jina', 'voyage']) t.true(ids.includes(id), id);
});

for (const subject of subjects) {
  const id = subject.registration.manifest.id;
  test.serial(`conformance: ${id}`, async (t) => {
    const report = await runConformance(subject);
    t.log(formatReport(report));
    const failed = report.results.filter((result) => result.outcome === 'fail');
    t.deepEqual(failed, [], `${id} fails ${failed.map((result) => result.name).join(', ')}`);
    const passed = report.results.filter((result) => result.outcome === 'pass').map((result) => result.name);
    // Whatever a plugin declares, the error mapping and auth rows must have run, not been skipped.
    const declared = subject.registration.create(pluginDependencies()).operations;
    if (declared.chat) {
      for (const name of ['chat.plain', 'chat.stream', 'chat.stream.usage', 'errors.429', 'stream.early-end', 'auth', 'developer-role', 'stop-sequences']) {
        t.true(passed.includes(name), `${id}: ${name} did not pass`);
      }
    }
    // Rerank runs on every plugin: answered where declared, refused (nothing sent) where not.
    const rerankRow = declared.rerank ? 'rerank' : 'rerank.unsupported';
    t.true(passed.includes(rerankRow), `${id}: ${rerankRow} did not pass`);
    // So do image generation, speech and transcription.
    for (const [operation, name] of [['imageGenerate', 'images'], ['speech', 'speech'], ['transcription', 'transcription']] as const) {
      const row = declared[operation] ? name : `${name}.unsupported`;
      t.true(passed.includes(row), `${id}: ${row} did not pass`);
    }
  });
}
