import test from 'ava';
import { dropsSpeechVoice, mangledImage, dropsStreamUsage, dropsToolTurns, dropsTranscriptionFile, lengthAsStop, losesToolFragments, maps429To500 } from './broken/broken-plugins.js';
import { type ConformanceSubject, formatReport, runConformance } from '../../core/conformance/index.js';

/** The kit must fail each broken plugin, naming the check that caught its bug, and pass the rest. */
const cases: Array<[label: string, subject: ConformanceSubject, failing: string, detail: RegExp]> = [
  ['drops usage from streams', dropsStreamUsage, 'chat.stream.usage', /usage chunk: no usage|0 chunks with choices/],
  ['maps 429 to 500', maps429To500, 'errors.429', /HTTP 500, expected 429/],
  ['loses tool-call argument fragments', losesToolFragments(), 'tools.stream', /assembled arguments/],
  ['reports a length cut as a stop', lengthAsStop, 'chat.length', /finish_reason "stop", expected "length"/],
  ['drops tool-role messages on a provider without tools', dropsToolTurns, 'tools.result', /roles \["user","assistant"\], expected/],
  ['changes the bytes of a generated image', mangledImage, 'images', /is not the provider's image/],
  ['leaves the voice out of a speech request', dropsSpeechVoice, 'speech', /voice is required/],
  ['loses the uploaded audio of a transcription', dropsTranscriptionFile, 'transcription', /file is required/],
];

for (const [label, subject, failing, detail] of cases) {
  test(`the kit fails a plugin that ${label}, on ${failing}`, async (t) => {
    const report = await runConformance(subject);
    const table = formatReport(report);
    t.log(table);
    t.false(report.passed);
    const failed = report.results.filter((result) => result.outcome === 'fail');
    t.deepEqual(
      failed.map((result) => result.name),
      [failing],
    );
    t.regex(failed[0].detail ?? '', detail);
    t.regex(table, new RegExp(`^${failing.replace('.', '\\.')}\\s+FAIL\\s`, 'm'));
    t.regex(table, /DOES NOT CONFORM/);
    t.is(report.results.find((result) => result.name === 'chat.plain')?.outcome, 'pass');
  });
}
