// Write a JSONL recording with Gemini CLI's own ChatRecordingService, and load one as
// `gemini --resume` does. Not run by the tests (Gemini CLI is not a dependency of ctxmgr):
//
//   npm install @google/gemini-cli-core@0.61.0
//   node generate.mjs make pomodoro-timer.json pomodoro-timer-resumed.jsonl
//   node generate.mjs check compacted.jsonl
//
// `make` resumes the legacy JSON recording as Gemini CLI does (ChatRecordingService.initialize
// with the session, which rewrites it as JSONL), then records one more turn: a user message,
// an info notice, a gemini answer with a tool call and its result. `check` loads a recording
// with loadConversationRecord and rebuilds the model history with
// convertSessionToClientHistory, the two steps of a resume, and prints what the model gets.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(path.join(process.cwd(), 'noop.js'));
const core = path.dirname(require.resolve('@google/gemini-cli-core/package.json'));
const { ChatRecordingService, loadConversationRecord } = await import(
  path.join(core, 'dist/src/services/chatRecordingService.js')
);
const { convertSessionToClientHistory } = await import(path.join(core, 'dist/src/utils/sessionUtils.js'));

const [mode, source, target] = process.argv.slice(2);

if (mode === 'make') {
  const conversation = JSON.parse(fs.readFileSync(source, 'utf8'));
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'gemini-cli-'));
  const legacy = path.join(folder, path.basename(source));
  fs.copyFileSync(source, legacy);
  const context = {
    promptId: conversation.sessionId,
    config: { getProjectRoot: () => folder, storage: { getProjectTempDir: () => folder } },
    toolRegistry: { getTool: () => undefined },
  };
  const service = new ChatRecordingService(context);
  await service.initialize({ conversation, filePath: legacy });
  service.recordMessage({ model: undefined, type: 'user', content: [{ text: 'Add a dark mode toggle.' }] });
  service.recordMessage({ model: undefined, type: 'info', content: 'Switched to gemini-2.5-flash for this turn.' });
  service.recordMessage({ model: 'gemini-2.5-flash', type: 'gemini', content: 'I will add a toggle button.' });
  const now = new Date().toISOString();
  const id = 'replace-1761077400000-darkmode';
  service.recordToolCalls('gemini-2.5-flash', [
    {
      id,
      name: 'replace',
      args: { file_path: 'style.css', old_string: 'body {', new_string: 'body.dark { background: #222; }\nbody {' },
      result: [{ functionResponse: { id, name: 'replace', response: { output: 'Successfully modified file: style.css (1 replacements).' } } }],
      status: 'success',
      timestamp: now,
    },
  ]);
  fs.copyFileSync(service.getConversationFilePath(), target);
} else {
  const record = await loadConversationRecord(source);
  if (!record) throw new Error(`${source}: Gemini CLI cannot load it`);
  const history = convertSessionToClientHistory(record.messages);
  const parts = history.flatMap((turn) => turn.content.parts);
  const calls = parts.filter((p) => p.functionCall).length;
  const responses = parts.filter((p) => p.functionResponse).length;
  console.log(
    `${source}: ${record.messages.length} records, ${history.length} turns (${calls} calls, ${responses} responses), ` +
      `${JSON.stringify(history).length} characters; roles ${history.map((t) => t.content.role[0]).join('')}`,
  );
}
